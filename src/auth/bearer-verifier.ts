// Validates opaque access tokens in-process through the authorization server's own records: expiry,
// revocation, audience (the resource the token is bound to), sender binding, scopes, tenant, membership
// and session version.
import type Provider from 'oidc-provider';
import type { Db } from '../db/client';
import { accessTokenHandle, isCurrent, parseAccountId } from './accounts';
import { isScope, type Principal } from './principal';

const MAX_TOKEN_LENGTH = 512;
/** Last use is recorded at most this often per token, so that reading the API does not write on every call. */
const LAST_USED_RESOLUTION_MS = 60_000;

export interface BearerVerifier {
  /** The principal of a live token for `resource`, or null when it is unknown, expired, revoked or not for it. */
  verify(token: string, resource: string): Promise<Principal | null>;
}

export function createBearerVerifier({ db, provider, now = () => Date.now() }: { db: Db; provider: Provider; now?: () => number }): BearerVerifier {
  const recentlyTouched = new Map<string, number>();

  async function touch(token: string) {
    const at = now();
    const handle = accessTokenHandle(token);
    if ((recentlyTouched.get(handle) ?? 0) > at - LAST_USED_RESOLUTION_MS) return;
    if (recentlyTouched.size > 10_000) recentlyTouched.clear();
    recentlyTouched.set(handle, at);
    await db.oidcPayload.updateMany({ where: { type: 'AccessToken', handle }, data: { lastUsedAt: new Date(at) } });
  }

  return {
    async verify(token, resource) {
      if (token.length > MAX_TOKEN_LENGTH) return null;
      const record = await provider.AccessToken.find(token);
      // Sender-constrained tokens (DPoP, mTLS) are not accepted as plain bearer tokens.
      if (!record || record.isExpired || record.jkt || record['x5t#S256']) return null;
      if (![record.aud].flat().includes(resource)) return null;
      const account = parseAccountId(record.accountId);
      if (!account || !(await isCurrent(db, account))) return null;
      await touch(token);
      return {
        kind: 'bearer',
        ...account,
        scopes: new Set((record.scope ?? '').split(' ').filter(isScope)),
        clientId: record.clientId ?? null,
      };
    },
  };
}
