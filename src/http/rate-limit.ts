// Rate limits, sign-in throttling (auth/sign-in-throttle.ts) and RFC 8628 polling intervals, as fixed
// windows counted by rate-limiter-flexible. On the embedded SQLite default one process serves, so the
// counters live in its memory; on PostgreSQL they live in the RateLimit table, so that every instance
// behind a load balancer spends the same budget.
import type { Request, RequestHandler } from 'express';
import { RateLimiterMemory, RateLimiterPrisma, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { DEFAULT_API_RATE_LIMITS, type DatabaseProvider } from '../config';
import type { Db } from '../db/client';
import { RateLimited } from '../lib/errors';
import { sha256 } from '../lib/hash';
import type { Logger } from '../lib/logger';
import { DEVICE_CODE_TTL } from '../auth/lifetimes';
import { MAX_WAIT_SECONDS } from '../auth/sign-in-throttle-fns';
import { createSignInThrottle, type SignInThrottle } from '../auth/sign-in-throttle';

export interface Policy {
  /** Requests allowed per window; 0 turns the policy off (nothing is counted or refused). */
  points: number;
  durationSeconds: number;
}

/** Default policies; tests pass smaller ones. */
export const DEFAULT_POLICIES: {
  /** Per credential (bearer token or session) on /api/v1. */
  api: Policy;
  /** Per IP on /api/v1, whatever the credential, so that made-up tokens cannot dodge a limit. */
  apiIp: Policy;
  /**
   * Failed sign-ins per account and address together, remembered for `durationSeconds`: past `points`, each
   * next attempt of the pair waits (1 s, doubling, 15 min at most). A success forgets them.
   */
  signInPair: Policy;
  /** Failed sign-ins per account from every address: past `points`, every address waits from its first failure. */
  signInAccount: Policy;
  /**
   * Failed sign-ins per address, whatever the account, and sign-up attempts; past `points` the address is
   * refused until the window ends.
   */
  signInIp: Policy;
  /** OAuth dynamic client registrations per IP. */
  registration: Policy;
  /** Device authorization requests per IP. */
  deviceAuthorization: Policy;
  /**
   * User codes entered at /device per IP that match no device code (RFC 8628 section 5.1: user codes must not
   * be guessable); past `points` the address is refused until the window ends. See oauth/user-code-guesses.ts.
   */
  userCode: Policy;
} = {
  api: { points: DEFAULT_API_RATE_LIMITS.api, durationSeconds: 60 },
  apiIp: { points: DEFAULT_API_RATE_LIMITS.apiAddress, durationSeconds: 60 },
  signInPair: { points: 5, durationSeconds: 24 * 60 * 60 },
  signInAccount: { points: 100, durationSeconds: 60 * 60 },
  signInIp: { points: 50, durationSeconds: 15 * 60 },
  registration: { points: 20, durationSeconds: 60 * 60 },
  deviceAuthorization: { points: 30, durationSeconds: 10 * 60 },
  userCode: { points: 20, durationSeconds: 10 * 60 },
};
export type PolicyName = keyof typeof DEFAULT_POLICIES;

export interface Decision {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetSeconds: number;
}

export interface RateLimits {
  /** Whether the policy counts at all (a policy of 0 points is off). */
  isOn(policy: PolicyName): boolean;
  /** Counts one point for key under the policy; never throws for a refused request (allowed: false). */
  consume(policy: PolicyName, key: string): Promise<Decision>;
  /** Reads a count without adding to it. */
  peek(policy: PolicyName, key: string): Promise<Decision>;
  /** Forgets a key. */
  reset(policy: PolicyName, key: string): Promise<void>;
  /** Takes back one point counted for key: an attempt counted before it was checked that turned out not to count. */
  giveBack(policy: PolicyName, key: string): Promise<void>;
  /** Sign-in attempts, counted by account and address (auth/sign-in-throttle.ts). */
  signIn: SignInThrottle;
  /** RFC 8628 polling: 'slow_down' when the device code is polled sooner than its interval since the last poll; each slow_down adds 5 s to that code's interval for the rest of its life (max 10 min). */
  poll(deviceCode: string, intervalSeconds: number): Promise<'ok' | 'slow_down'>;
}

export interface RateLimitsOptions {
  db: Db;
  provider: DatabaseProvider;
  policies?: Partial<Record<PolicyName, Policy>>;
  /** Receives a warning when the store fails (never the key). */
  logger?: Logger;
}

/** RFC 8628 section 3.5. */
const SLOW_DOWN_SECONDS = 5;

const POLICY_NAMES = Object.keys(DEFAULT_POLICIES) as PolicyName[];

function resolvePolicies(overrides: Partial<Record<PolicyName, Policy>>): Record<PolicyName, Policy> {
  const resolved = {} as Record<PolicyName, Policy>;
  for (const name of POLICY_NAMES) {
    const { points, durationSeconds } = overrides[name] ?? DEFAULT_POLICIES[name];
    if (!Number.isInteger(points) || points < 0 || !Number.isFinite(durationSeconds) || durationSeconds <= 0) {
      throw new Error(`Rate limit policy ${name}: points must be a non-negative integer and durationSeconds a positive number.`);
    }
    resolved[name] = { points, durationSeconds };
  }
  return resolved;
}

/**
 * Limiters on one store, keys prefixed `<prefix>:`, so policies never share a counter. Expired counters
 * are deleted by the process's own sweep (auth/sweep.ts), not by a timer of the library, which would
 * outlive the database client it was given.
 */
function limiterFactory(db: Db, provider: DatabaseProvider) {
  return (keyPrefix: string, { points, durationSeconds }: Policy): RateLimiterAbstract => {
    const opts = { keyPrefix, points, duration: durationSeconds };
    if (provider === 'sqlite') return new RateLimiterMemory(opts);
    // Should the database fail, each instance keeps counting in memory rather than letting everything through.
    const insuranceLimiter = new RateLimiterMemory(opts);
    return new RateLimiterPrisma({ ...opts, storeClient: db, tableName: 'rateLimit', clearExpiredByTimeout: false, insuranceLimiter });
  };
}

/** A counter that has expired (or never existed) reads as null. Every window here has a duration, so ≤ 0 ms left means expired. */
const live = (res: RateLimiterRes | null) => (res && res.msBeforeNext > 0 ? res : null);

function decision({ points }: Policy, res: RateLimiterRes | null, allowed: boolean): Decision {
  if (!res) return { allowed, limit: points, remaining: points, resetSeconds: 0 };
  return { allowed, limit: points, remaining: Math.max(points - res.consumedPoints, 0), resetSeconds: Math.ceil(res.msBeforeNext / 1000) };
}

/** The library rejects with a RateLimiterRes when the points are spent, and with an Error when the store fails. */
async function counted<T>(operation: Promise<RateLimiterRes>, spent: (res: RateLimiterRes) => T, ok: (res: RateLimiterRes) => T): Promise<T> {
  try {
    return ok(await operation);
  } catch (err) {
    if (err instanceof RateLimiterRes) return spent(err);
    throw err;
  }
}

export function createRateLimits({ db, provider, policies = {}, logger }: RateLimitsOptions): RateLimits {
  const resolved = resolvePolicies(policies);
  const limiterFor = limiterFactory(db, provider);
  const isOn = (policy: PolicyName) => resolved[policy].points > 0;
  const limiters = Object.fromEntries(POLICY_NAMES.filter(isOn).map((name) => [name, limiterFor(name, resolved[name])])) as Record<PolicyName, RateLimiterAbstract>;
  // One point per interval (each poll sets its own window), and the count of slow_downs a code has earned;
  // neither need outlive the device code.
  const pollWindows = limiterFor('devicePoll', { points: 1, durationSeconds: DEVICE_CODE_TTL });
  const slowDowns = limiterFor('deviceSlowDown', { points: 1, durationSeconds: DEVICE_CODE_TTL });

  // Fail open as a last resort (the store limiters already fall back to memory): a limiter that fails must
  // not turn sign-in or the API into 500s; a database outage shows on its own in the request's next query
  // (a 503). Only the error's name and code are logged, since a Prisma message can quote the query and
  // with it the key.
  async function failingOpen<T>(operation: string, fallback: T, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      const { name, code } = (err ?? {}) as { name?: string; code?: string };
      logger?.warn({ operation, error: { name, code } }, 'rate limit store failed; allowing the request');
      return fallback;
    }
  }

  const allowed = (policy: PolicyName) => decision(resolved[policy], null, true);
  const counter = (policy: PolicyName) => (isOn(policy) ? { limiter: limiters[policy], points: resolved[policy].points } : null);
  const signIn = createSignInThrottle({
    pair: counter('signInPair'),
    address: counter('signInIp'),
    account: counter('signInAccount'),
    waits: limiterFor('signInWait', { points: 1, durationSeconds: MAX_WAIT_SECONDS }),
    guard: failingOpen,
  });

  return {
    isOn,
    signIn,

    async consume(policy, key) {
      if (!isOn(policy)) return allowed(policy);
      return failingOpen(`consume ${policy}`, allowed(policy), () =>
        counted(
          limiters[policy].consume(key),
          (res) => decision(resolved[policy], res, false),
          (res) => decision(resolved[policy], res, true),
        ),
      );
    },

    async peek(policy, key) {
      if (!isOn(policy)) return allowed(policy);
      return failingOpen(`peek ${policy}`, allowed(policy), async () => {
        const res = live(await limiters[policy].get(key));
        return decision(resolved[policy], res, !res || res.consumedPoints < resolved[policy].points);
      });
    },

    reset: (policy, key) =>
      failingOpen(`reset ${policy}`, undefined, async () => {
        await limiters[policy]?.delete(key);
      }),

    giveBack: (policy, key) =>
      failingOpen(`give back ${policy}`, undefined, async () => {
        await limiters[policy]?.reward(key, 1);
      }),

    poll: (deviceCode, intervalSeconds) =>
      failingOpen<'ok' | 'slow_down'>('poll', 'ok', async () => {
        // Device codes are credentials: the store keeps only their hash.
        const key = sha256(deviceCode);
        const earned = live(await slowDowns.get(key))?.consumedPoints ?? 0;
        const interval = Math.min(Math.max(intervalSeconds, 1) + SLOW_DOWN_SECONDS * earned, DEVICE_CODE_TTL);
        const onTime = await counted(pollWindows.consume(key, 1, { customDuration: interval }), () => false, () => true);
        if (onTime) return 'ok';
        await slowDowns.penalty(key, 1);
        // The next poll is timed from this one, against the longer interval.
        await pollWindows.set(key, 1, Math.min(interval + SLOW_DOWN_SECONDS, DEVICE_CODE_TTL));
        return 'slow_down';
      }),
  };
}

/**
 * Counts one point under `policy` for keyOf(req) (no key, no count) and announces the budget in the
 * draft-ietf-httpapi-ratelimit-headers fields; a refused request goes to the error handler as a 429.
 */
export function rateLimit(limits: RateLimits, policy: PolicyName, keyOf: (req: Request) => string | null): RequestHandler {
  if (!limits.isOn(policy)) return (_req, _res, next) => next();
  return async (req, res, next) => {
    const key = keyOf(req);
    if (key === null) return next();
    const { allowed, limit, remaining, resetSeconds } = await limits.consume(policy, key);
    res.setHeader('RateLimit-Limit', String(limit));
    res.setHeader('RateLimit-Remaining', String(remaining));
    res.setHeader('RateLimit-Reset', String(resetSeconds));
    next(allowed ? undefined : new RateLimited(resetSeconds));
  };
}
