// The owner's view of what they have granted: live access tokens (metadata only) and authorized clients,
// each revocable. Every query is scoped to the owner and the tenant of the session.
import type { components } from '../../generated/openapi';
import type { Principal } from '../auth/principal';
import { isScope, type Scope } from '../auth/principal';
import type { Db } from '../db/client';
import { NotFound } from '../lib/errors';
import { accountIdOf } from '../auth/accounts';

type AccessToken = components['schemas']['AccessToken'];
type AuthorizedClient = components['schemas']['AuthorizedClient'];

interface TokenPayload {
  accountId: string;
  clientId: string;
  scope?: string;
  aud?: string | string[];
  iat: number;
  exp: number;
}

interface GrantPayload {
  accountId: string;
  clientId: string;
  iat: number;
  resources?: Record<string, string>;
}

const scopesOf = (scope: string | undefined): Scope[] => (scope ?? '').split(' ').filter(isScope).sort();
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

export function createAccessService({ db, now = () => new Date() }: { db: Db; now?: () => Date }) {
  /**
   * Live rows of one kind issued to the principal's account: its owner and tenant at its session version
   * (the principal was authenticated as current, so older versions are dead records).
   */
  async function liveRecords<T extends { accountId: string; exp?: number }>(principal: Principal, type: string, where: object = {}) {
    const rows = await db.oidcPayload.findMany({
      where: { type, accountId: principal.ownerId, tenantId: principal.tenantId, consumedAt: null, expiresAt: { gt: now() }, ...where },
      orderBy: { createdAt: 'desc' },
      select: { id: true, payload: true, handle: true, grantId: true, lastUsedAt: true },
    });
    const account = accountIdOf(principal);
    return rows
      .map((row) => ({ ...row, payload: row.payload as unknown as T }))
      .filter((row) => row.payload.accountId === account)
      .filter((row) => row.payload.exp === undefined || row.payload.exp * 1000 > now().getTime());
  }

  async function clientNames(clientIds: string[]): Promise<Map<string, string>> {
    const rows = await db.oidcPayload.findMany({ where: { type: 'Client', id: { in: [...new Set(clientIds)] } }, select: { id: true, payload: true } });
    return new Map(rows.map((row) => [row.id, (row.payload as { client_name?: string }).client_name ?? row.id]));
  }

  return {
    async listAccessTokens(principal: Principal): Promise<AccessToken[]> {
      const tokens = await liveRecords<TokenPayload>(principal, 'AccessToken');
      const names = await clientNames(tokens.map((t) => t.payload.clientId));
      return tokens.map(({ payload, handle, lastUsedAt }) => ({
        id: handle!,
        clientId: payload.clientId,
        clientName: names.get(payload.clientId) ?? payload.clientId,
        scopes: scopesOf(payload.scope),
        resource: [payload.aud].flat()[0] ?? '',
        createdAt: iso(payload.iat),
        expiresAt: iso(payload.exp),
        lastUsedAt: lastUsedAt?.toISOString() ?? null,
      }));
    },

    async revokeAccessToken(principal: Principal, tokenId: string): Promise<void> {
      const { count } = await db.oidcPayload.deleteMany({
        where: { type: 'AccessToken', handle: tokenId, accountId: principal.ownerId, tenantId: principal.tenantId },
      });
      if (count === 0) throw new NotFound('No such access token.');
    },

    async listAuthorizedClients(principal: Principal): Promise<AuthorizedClient[]> {
      const [grants, tokens] = await Promise.all([
        liveRecords<GrantPayload>(principal, 'Grant'),
        liveRecords<TokenPayload>(principal, 'AccessToken'),
      ]);
      const names = await clientNames(grants.map((g) => g.payload.clientId));
      const byClient = new Map<string, AuthorizedClient>();
      for (const { payload } of grants) {
        const scopes = Object.values(payload.resources ?? {}).flatMap((s) => scopesOf(s));
        const entry = byClient.get(payload.clientId);
        if (entry) {
          entry.scopes = [...new Set([...entry.scopes, ...scopes])].sort() as Scope[];
          if (iso(payload.iat) < entry.grantedAt) entry.grantedAt = iso(payload.iat);
          continue;
        }
        byClient.set(payload.clientId, {
          clientId: payload.clientId,
          clientName: names.get(payload.clientId) ?? payload.clientId,
          scopes: [...new Set(scopes)].sort() as Scope[],
          grantedAt: iso(payload.iat),
          lastUsedAt: null,
          activeTokens: 0,
        });
      }
      for (const token of tokens) {
        const entry = byClient.get(token.payload.clientId);
        if (!entry) continue;
        entry.activeTokens += 1;
        const used = token.lastUsedAt?.toISOString();
        if (used && (!entry.lastUsedAt || used > entry.lastUsedAt)) entry.lastUsedAt = used;
      }
      return [...byClient.values()];
    },

    /** Revokes every grant of the client for this owner and tenant, with all their codes and tokens. */
    async revokeAuthorizedClient(principal: Principal, clientId: string): Promise<void> {
      const grants = await db.oidcPayload.findMany({
        where: { type: 'Grant', accountId: principal.ownerId, tenantId: principal.tenantId },
        select: { id: true, payload: true },
      });
      const grantIds = grants.filter((g) => (g.payload as unknown as GrantPayload).clientId === clientId).map((g) => g.id);
      if (grantIds.length === 0) throw new NotFound('No such authorized client.');
      await db.oidcPayload.deleteMany({ where: { grantId: { in: grantIds } } });
    },
  };
}

export type AccessService = ReturnType<typeof createAccessService>;
