// Server-side owner sessions behind the signed `svc_session` cookie. The cookie carries a random token;
// the table keeps only its SHA-256, and every use rechecks the membership and the owner's sessionVersion.
import { createHash, randomBytes } from 'node:crypto';
import type { CookieOptions } from 'express';
import type { Db } from '../db/client';
import { SESSION_TTL_MS } from './lifetimes';
import { accountHolds } from './accounts';
import { SCOPES, type Principal } from './principal';

export const SESSION_COOKIE = 'svc_session';

/** Signed, out of scripts' reach, not sent on cross-site subrequests, and https-only when the service is. */
export function sessionCookieOptions(baseUrl: URL, expiresAt: Date): CookieOptions {
  return { signed: true, httpOnly: true, sameSite: 'lax', secure: baseUrl.protocol === 'https:', path: '/', expires: expiresAt };
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export interface SessionService {
  create(ownerId: string, tenantId: string): Promise<{ token: string; expiresAt: Date }>;
  /** The principal of a live session, or null when it is unknown, expired, revoked or no longer a member. */
  authenticate(token: string): Promise<Principal | null>;
  destroy(token: string): Promise<void>;
  /** Moves a live session to another tenant of its owner; false when the owner is not a member. */
  switchTenant(token: string, tenantId: string): Promise<boolean>;
}

export function createSessionService({ db, now = () => new Date() }: { db: Db; now?: () => Date }): SessionService {
  return {
    async create(ownerId, tenantId) {
      const owner = await db.owner.findUniqueOrThrow({ where: { id: ownerId }, select: { sessionVersion: true } });
      const token = randomBytes(32).toString('base64url');
      const expiresAt = new Date(now().getTime() + SESSION_TTL_MS);
      await db.session.create({
        data: { id: hashToken(token), ownerId, tenantId, sessionVersion: owner.sessionVersion, expiresAt },
      });
      return { token, expiresAt };
    },

    async authenticate(token) {
      const session = await db.session.findUnique({
        where: { id: hashToken(token) },
        select: {
          ownerId: true,
          tenantId: true,
          sessionVersion: true,
          expiresAt: true,
          owner: { select: { sessionVersion: true, memberships: { select: { tenantId: true } } } },
        },
      });
      if (!session || session.expiresAt <= now() || !accountHolds(session, session.owner)) return null;
      const { ownerId, tenantId, sessionVersion } = session;
      return { kind: 'session', ownerId, tenantId, sessionVersion, scopes: new Set(SCOPES), clientId: null };
    },

    async destroy(token) {
      await db.session.deleteMany({ where: { id: hashToken(token) } });
    },

    async switchTenant(token, tenantId) {
      const session = await db.session.findUnique({ where: { id: hashToken(token) }, select: { ownerId: true } });
      if (!session) return false;
      const member = await db.membership.findUnique({ where: { tenantId_ownerId: { tenantId, ownerId: session.ownerId } }, select: { id: true } });
      if (!member) return false;
      await db.session.update({ where: { id: hashToken(token) }, data: { tenantId } });
      return true;
    },
  };
}
