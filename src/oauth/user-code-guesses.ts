// RFC 8628 section 5.1: user codes are short, so the codes an address may guess at /device are limited.
// What counts is a guess: a code that matches no device code. As failed sign-ins are (auth/sign-in-throttle.ts),
// every code is counted before it is looked up, so that a burst cannot outrun the count, and a code that
// matched is given back once the authorization server has looked it up: owners behind one address may
// approve and deny as many devices as they like.
import type { Request } from 'express';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Decision, RateLimits } from '../http/rate-limit';

/** Requests whose code was counted, with the address it was counted for. */
const counted = new WeakMap<object, string>();
/** Requests whose code matched no device code. */
const unmatched = new WeakSet<object>();

/** Counts the code a POST to /device carries (the /device gate, pages/interaction-pages.ts). */
export async function countUserCode(limits: RateLimits, req: Request): Promise<Decision> {
  const address = req.ip ?? '';
  const decision = await limits.consume('userCode', address);
  if (decision.allowed) counted.set(req, address);
  return decision;
}

/** The code matched no device code (the input page says so, device-pages.ts): it stays counted. */
export const markUnmatched = (ctx: KoaContextWithOIDC) => unmatched.add(ctx.req);

/** Provider middleware: after the lookup, a counted code that matched is given back, before the answer goes out. */
export function giveBackMatchedCodes(limits: RateLimits) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    await next();
    const address = counted.get(ctx.req);
    if (address === undefined || unmatched.has(ctx.req)) return;
    counted.delete(ctx.req);
    await limits.giveBack('userCode', address);
  };
}
