// The authorization server's "account" is an owner acting in one tenant at one session version:
// `<ownerId>.<tenantId>.<sessionVersion>`. Sessions, grants and tokens are bound to one, so leaving the
// tenant or signing out everywhere (which bumps the version) ends all of them at the next check.
import type { Db } from '../db/client';
import { sha256 } from '../lib/hash';

export interface Account {
  ownerId: string;
  tenantId: string;
  sessionVersion: number;
}

/** What the rule needs to know of the owner: the current version and the memberships in the account's tenant. */
export interface OwnerStanding {
  sessionVersion: number;
  memberships: { tenantId: string }[];
}

export const accountIdOf = ({ ownerId, tenantId, sessionVersion }: Account) => `${ownerId}.${tenantId}.${sessionVersion}`;

export function parseAccountId(accountId: unknown): Account | null {
  if (typeof accountId !== 'string') return null;
  const [ownerId, tenantId, version, ...rest] = accountId.split('.');
  const sessionVersion = Number(version);
  if (!ownerId || !tenantId || rest.length > 0 || !Number.isInteger(sessionVersion)) return null;
  return { ownerId, tenantId, sessionVersion };
}

/** The one rule: an account holds while its owner is a member of its tenant at the same session version. */
export function accountHolds(account: Account, owner: OwnerStanding | null | undefined): boolean {
  return Boolean(owner && owner.sessionVersion === account.sessionVersion && owner.memberships.some((m) => m.tenantId === account.tenantId));
}

/** The Prisma selection that loads an owner's standing in one tenant. */
export const standingIn = (tenantId: string) => ({ sessionVersion: true, memberships: { where: { tenantId }, select: { tenantId: true } } }) as const;

/** Whether the account still holds, read from the database. */
export async function isCurrent(db: Db, account: Account): Promise<boolean> {
  const owner = await db.owner.findUnique({ where: { id: account.ownerId }, select: standingIn(account.tenantId) });
  return accountHolds(account, owner);
}

/** The id an owner sees for an access token; derived from the token value, which is never shown. */
export const accessTokenHandle = (token: string) => `at_${sha256(token).slice(0, 24)}`;
