// Owners, tenants, sessions and access tokens for tests, made through the real session service and
// stored in the authorization server's record format.
import { randomBytes } from 'node:crypto';
import { sign } from 'cookie-signature';
import { ACCESS_TOKEN_TYPE, type AccessTokenRecord } from '../../src/auth/bearer-verifier';
import { SESSION_COOKIE } from '../../src/auth/session-service';
import type { Db } from '../../src/db/client';
import { newId } from '../../src/lib/ids';
import type { TestApp } from './app';

export interface TestOwner {
  ownerId: string;
  tenantId: string;
  email: string;
}

export async function createOwner(db: Db, { email, tenantName = 'Acme' }: { email?: string; tenantName?: string } = {}): Promise<TestOwner> {
  const ownerId = newId('own');
  const tenantId = newId('ten');
  const address = email ?? `${ownerId}@example.test`;
  await db.tenant.create({ data: { id: tenantId, name: tenantName } });
  await db.owner.create({ data: { id: ownerId, email: address } });
  await db.membership.create({ data: { id: newId('mem'), tenantId, ownerId } });
  return { ownerId, tenantId, email: address };
}

/** A `Cookie` header value for a new owner session. */
export async function sessionCookie(app: TestApp, owner: TestOwner): Promise<string> {
  const { token } = await app.sessions.create(owner.ownerId, owner.tenantId);
  return `${SESSION_COOKIE}=${encodeURIComponent(`s:${sign(token, app.cookieSecret)}`)}`;
}

export async function accessToken(
  app: TestApp,
  owner: TestOwner,
  { scopes = ['flows:read', 'flows:write', 'runs:read', 'runs:write'], resource, expiresIn = 3600 }: { scopes?: string[]; resource?: string; expiresIn?: number } = {},
): Promise<string> {
  const { sessionVersion } = await app.database.db.owner.findUniqueOrThrow({ where: { id: owner.ownerId } });
  const token = randomBytes(32).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const record: AccessTokenRecord & Record<string, unknown> = {
    jti: token,
    kind: 'AccessToken',
    accountId: owner.ownerId,
    clientId: 'client_test',
    scope: scopes.join(' '),
    aud: resource ?? `${app.config.baseUrl.origin}/api/v1`,
    iat: now,
    exp: now + expiresIn,
    extra: { tenantId: owner.tenantId, sessionVersion },
  };
  await app.database.db.oidcPayload.create({
    data: {
      type: ACCESS_TOKEN_TYPE,
      id: token,
      payload: record as object,
      accountId: owner.ownerId,
      tenantId: owner.tenantId,
      grantId: newId('grt'),
      expiresAt: new Date(record.exp * 1000),
    },
  });
  return token;
}
