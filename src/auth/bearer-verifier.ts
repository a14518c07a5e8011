// Validates opaque access tokens in-process against the authorization server's stored records:
// expiry, audience (the resource the token is bound to), scopes, tenant, membership and session version.
import type { Db } from '../db/client';
import { isScope, type Principal } from './principal';

/** The fields of a stored access token that the API relies on (the authorization server's record). */
export interface AccessTokenRecord {
  accountId: string;
  clientId: string;
  scope?: string;
  aud?: string | string[];
  exp: number;
  extra?: { tenantId?: string; sessionVersion?: number };
}

export const ACCESS_TOKEN_TYPE = 'AccessToken';
const MAX_TOKEN_LENGTH = 512;

export interface BearerVerifier {
  /** The principal of a live token for `resource`, or null when it is unknown, expired, revoked or not for it. */
  verify(token: string, resource: string): Promise<Principal | null>;
}

export function createBearerVerifier({ db, now = () => Date.now() }: { db: Db; now?: () => number }): BearerVerifier {
  return {
    async verify(token, resource) {
      if (token.length > MAX_TOKEN_LENGTH) return null;
      const row = await db.oidcPayload.findUnique({
        where: { type_id: { type: ACCESS_TOKEN_TYPE, id: token } },
        select: { payload: true, consumedAt: true },
      });
      if (!row || row.consumedAt) return null;
      const record = row.payload as unknown as AccessTokenRecord;
      const audiences = Array.isArray(record.aud) ? record.aud : [record.aud];
      const tenantId = record.extra?.tenantId;
      if (record.exp * 1000 <= now() || !audiences.includes(resource) || !tenantId) return null;

      const owner = await db.owner.findUnique({
        where: { id: record.accountId },
        select: { sessionVersion: true, memberships: { where: { tenantId }, select: { id: true } } },
      });
      if (!owner || owner.memberships.length === 0 || owner.sessionVersion !== record.extra?.sessionVersion) return null;
      return {
        kind: 'bearer',
        ownerId: record.accountId,
        tenantId,
        scopes: new Set((record.scope ?? '').split(' ').filter(isScope)),
        clientId: record.clientId,
      };
    },
  };
}
