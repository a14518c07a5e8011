// The authorization server's "account" is an owner acting in one tenant at one session version:
// `<ownerId>.<tenantId>.<sessionVersion>`. Grants and tokens are bound to it, so leaving the tenant or
// signing out everywhere (which bumps the version) ends every grant and token at the next check.
import type { Db } from '../db/client';

export interface Account {
  ownerId: string;
  tenantId: string;
  sessionVersion: number;
}

export const accountIdOf = ({ ownerId, tenantId, sessionVersion }: Account) => `${ownerId}.${tenantId}.${sessionVersion}`;

export function parseAccountId(accountId: unknown): Account | null {
  if (typeof accountId !== 'string') return null;
  const [ownerId, tenantId, version, ...rest] = accountId.split('.');
  const sessionVersion = Number(version);
  if (!ownerId || !tenantId || rest.length > 0 || !Number.isInteger(sessionVersion)) return null;
  return { ownerId, tenantId, sessionVersion };
}

/** Whether the account still holds: the owner is a member of the tenant at the same session version. */
export async function isCurrent(db: Db, account: Account): Promise<boolean> {
  const owner = await db.owner.findUnique({
    where: { id: account.ownerId },
    select: { sessionVersion: true, memberships: { where: { tenantId: account.tenantId }, select: { id: true } } },
  });
  return Boolean(owner && owner.sessionVersion === account.sessionVersion && owner.memberships.length > 0);
}
