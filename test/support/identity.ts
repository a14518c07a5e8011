// Owners, tenants, sessions and access tokens for tests, made through the real session service and
// stored in the authorization server's record format.
import { sign } from 'cookie-signature';
import { SESSION_COOKIE } from '../../src/auth/session-service';
import type { Db } from '../../src/db/client';
import { newId } from '../../src/lib/ids';
import { accountIdOf } from '../../src/auth/accounts';
import { prismaAdapterFactory } from '../../src/oauth/adapter';
import { resourcesOf } from '../../src/oauth/resources';
import { DEVICE_CODE_GRANT } from '../../src/oauth/registration-policy';
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

/** Registers a public device client straight in the authorization server's storage. */
export async function registerTestClient(app: TestApp, name = 'Test client'): Promise<string> {
  const clientId = newId('cli');
  const Adapter = prismaAdapterFactory(app.database.db);
  await new Adapter('Client').upsert(
    clientId,
    {
      client_id: clientId,
      client_name: name,
      token_endpoint_auth_method: 'none',
      grant_types: [DEVICE_CODE_GRANT, 'refresh_token'],
      response_types: [],
      redirect_uris: [],
    },
    0,
  );
  return clientId;
}

/**
 * An access token issued by the real authorization server for the owner in their tenant, as the device
 * flow would issue it (tests/api/oauth-device-flow.test.ts runs that flow itself). A negative
 * `expiresIn` makes a token that has already expired.
 */
export async function accessToken(
  app: TestApp,
  owner: TestOwner,
  { scopes = ['flows:read', 'flows:write', 'runs:read', 'runs:write'], resource, expiresIn = 3600, clientId }: { scopes?: string[]; resource?: string; expiresIn?: number; clientId?: string } = {},
): Promise<string> {
  const { provider } = app;
  const { sessionVersion } = await app.database.db.owner.findUniqueOrThrow({ where: { id: owner.ownerId } });
  const accountId = accountIdOf({ ownerId: owner.ownerId, tenantId: owner.tenantId, sessionVersion });
  const client = await provider.Client.find(clientId ?? (await registerTestClient(app)));
  if (!client) throw new Error('the test client was not stored');
  const audience = resource ?? resourcesOf(app.config.baseUrl).api;
  const grant = new provider.Grant({ accountId, clientId: client.clientId });
  grant.addResourceScope(audience, scopes.join(' '));
  const grantId = await grant.save();
  const token = new provider.AccessToken({ accountId, client, grantId, scope: scopes.join(' '), gty: 'device_code', expiresIn: Math.max(expiresIn, 1) });
  token.setAudience(audience);
  const value = await token.save();
  if (expiresIn <= 0) {
    const row = await app.database.db.oidcPayload.findUniqueOrThrow({ where: { type_id: { type: 'AccessToken', id: value } } });
    const payload = { ...(row.payload as object), exp: Math.floor(Date.now() / 1000) + expiresIn };
    await app.database.db.oidcPayload.update({ where: { type_id: { type: 'AccessToken', id: value } }, data: { payload } });
  }
  return value;
}
