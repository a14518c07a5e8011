// The scopes this authorization server offers, and the check that refuses any other when a client asks
// (RFC 6749 section 5.2, invalid_scope). The library drops a scope it does not know without a word, so a
// client asking for one would be shown to the owner as if it were real and learn only at the end, after the
// approval, that it got less than it asked for or nothing.
import { errors } from 'oidc-provider';
import { SCOPES } from '../auth/principal';

/** The API's scopes, `offline_access` (refresh tokens) and `openid` (an ID token in the authorization-code flow). */
export const OFFERED_SCOPES: readonly string[] = ['openid', 'offline_access', ...SCOPES];

const LONGEST_QUOTED = 64;

/** Throws invalid_scope for a requested scope this server does not offer. */
export function refuseUnofferedScopes(scope: string | undefined): void {
  const unknown = (scope ?? '').split(' ').find((value) => value && !OFFERED_SCOPES.includes(value));
  if (unknown === undefined) return;
  const named = unknown.length > LONGEST_QUOTED ? 'a requested scope' : unknown;
  throw new errors.InvalidScope(`${named} is not a scope of this server; it offers ${OFFERED_SCOPES.join(' ')}`, unknown);
}
