// Credentials, scopes and the owner-session rule, driven by each operation's `security` in the contract.
import cookieParser from 'cookie-parser';
import { sign } from 'cookie-signature';
import express from 'express';
import request from 'supertest';
import { SCOPES } from '../../src/auth/principal';
import { SESSION_COOKIE, sessionCookieOptions } from '../../src/auth/session-service';
import { requirementOf } from '../../src/http/security';
import { BASE_URL, startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner, sessionCookie, type TestOwner } from '../support/identity';

let app: TestApp;
let owner: TestOwner;

beforeAll(async () => {
  app = await startTestApp();
  owner = await createOwner(app.database.db);
});
afterAll(() => app.close());

const me = (headers: Record<string, string>) => call(app, 'GET', '/api/v1/me', { headers });
const bearerOf = (token: string) => ({ authorization: `Bearer ${token}` });

interface ContractOperation {
  operationId: string;
  method: string;
  path: string;
  scope: string | null;
  sessionOnly: boolean;
  hasBody: boolean;
}

function contractOperations(): ContractOperation[] {
  const doc = app.api.contract.inlined;
  return Object.entries(doc.paths).flatMap(([path, item]: [string, any]) =>
    Object.entries(item)
      .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
      .map(([method, op]: [string, any]) => {
        const requirement = requirementOf(op.security)!;
        return {
          operationId: op.operationId,
          method: method.toUpperCase(),
          path: path.replace(/\{[^}]+\}/g, 'x_1'),
          scope: requirement.scope,
          sessionOnly: requirement.sessionOnly,
          hasBody: Boolean(op.requestBody),
        };
      }),
  );
}

function send(op: ContractOperation, headers: Record<string, string>) {
  return call(app, op.method, op.path, { headers, body: op.hasBody ? {} : undefined });
}

describe('missing or invalid credentials', () => {
  it('answers 401 with a Bearer challenge naming the protected-resource metadata', async () => {
    const res = await me({});
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthenticated');
    expect(res.headers['www-authenticate']).toBe(
      `Bearer realm="flows", resource_metadata="${BASE_URL}/.well-known/oauth-protected-resource/api/v1"`,
    );
  });

  it.each([
    ['an unknown token', 'Bearer not-a-token'],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['an empty bearer', 'Bearer '],
  ])('refuses %s with 401 invalid_token', async (_label, authorization) => {
    const res = await me({ authorization });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('invalid_token');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="flows", error="invalid_(token|request)"/);
  });

  it('refuses an expired token', async () => {
    const token = await accessToken(app, owner, { expiresIn: -1 });
    expect((await me(bearerOf(token))).status).toBe(401);
  });

  it('refuses a token bound to another resource (the MCP endpoint), saying so', async () => {
    const token = await accessToken(app, owner, { resource: `${BASE_URL}/mcp` });
    const res = await me(bearerOf(token));
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({ code: 'invalid_token', message: expect.stringContaining(`bound to another resource (${BASE_URL}/mcp)`) });
    expect(res.headers['www-authenticate']).toContain('error_description="The access token is bound to another resource"');
  });

  it('refuses a revoked token at once', async () => {
    const token = await accessToken(app, owner);
    expect((await me(bearerOf(token))).status).toBe(200);
    await app.database.db.oidcPayload.deleteMany({ where: { id: token } });
    expect((await me(bearerOf(token))).status).toBe(401);
  });

  it.each([
    ['a cookie with a bad signature', `${SESSION_COOKIE}=${encodeURIComponent('s:abc.def')}`],
    ['an unsigned cookie', `${SESSION_COOKIE}=abc`],
  ])('refuses %s with 401 invalid_session', async (_label, cookie) => {
    const res = await me({ cookie });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('invalid_session');
  });

  it('refuses a well-signed cookie naming no session', async () => {
    const res = await me({ cookie: `${SESSION_COOKIE}=${encodeURIComponent(`s:${sign('no-such-session', app.cookieSecret)}`)}` });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('invalid_session');
  });

  it('refuses an expired session', async () => {
    const cookie = await sessionCookie(app, owner);
    await app.database.db.session.updateMany({ where: { ownerId: owner.ownerId }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect((await me({ cookie })).status).toBe(401);
  });
});

describe('membership and session version are rechecked on every call', () => {
  it('refuses cookie and bearer at once when the owner leaves the tenant', async () => {
    const member = await createOwner(app.database.db);
    const cookie = await sessionCookie(app, member);
    const token = await accessToken(app, member);
    expect((await me({ cookie })).status).toBe(200);
    expect((await me(bearerOf(token))).status).toBe(200);

    await app.database.db.membership.deleteMany({ where: { ownerId: member.ownerId } });

    expect((await me({ cookie })).body.error.code).toBe('invalid_session');
    expect((await me(bearerOf(token))).body.error.code).toBe('invalid_token');
  });

  it('refuses cookie and bearer at once when the session version is bumped', async () => {
    const member = await createOwner(app.database.db);
    const cookie = await sessionCookie(app, member);
    const token = await accessToken(app, member);
    expect((await me({ cookie })).status).toBe(200);

    await app.database.db.owner.update({ where: { id: member.ownerId }, data: { sessionVersion: { increment: 1 } } });

    expect((await me({ cookie })).status).toBe(401);
    expect((await me(bearerOf(token))).status).toBe(401);
    // A session started after the bump works.
    expect((await me({ cookie: await sessionCookie(app, member) })).status).toBe(200);
  });
});

describe('scopes, from the contract', () => {
  it('every operation names exactly one known scope, or is getMe', () => {
    for (const op of contractOperations()) {
      if (op.operationId === 'getMe') expect(op.scope).toBeNull();
      else expect(SCOPES).toContain(op.scope);
    }
  });

  it('refuses a bearer without the operation\'s scope with 403 insufficient_scope, and lets one with it through', async () => {
    for (const op of contractOperations().filter((o) => o.scope && !o.sessionOnly)) {
      const without = await accessToken(app, owner, { scopes: SCOPES.filter((s) => s !== op.scope) });
      const refused = await send(op, bearerOf(without));
      expect({ op: op.operationId, status: refused.status, code: refused.body.error?.code }).toEqual({
        op: op.operationId,
        status: 403,
        code: 'insufficient_scope',
      });
      expect(refused.headers['www-authenticate']).toContain(`scope="${op.scope}"`);

      const only = await accessToken(app, owner, { scopes: [op.scope!] });
      const allowed = await send(op, bearerOf(only));
      expect({ op: op.operationId, passed: ![401, 403].includes(allowed.status) }).toEqual({ op: op.operationId, passed: true });
    }
  });

  it('getMe accepts a token with no scope at all', async () => {
    expect((await me(bearerOf(await accessToken(app, owner, { scopes: [] })))).status).toBe(200);
  });
});

describe('owner-session-only operations', () => {
  it('covers access tokens, authorized clients and run replay', () => {
    const sessionOnly = contractOperations().filter((o) => o.sessionOnly).map((o) => o.operationId).sort();
    expect(sessionOnly).toEqual(['listAccessTokens', 'listAuthorizedClients', 'replayRun', 'revokeAccessToken', 'revokeAuthorizedClient']);
  });

  it('refuses a bearer holding every scope with 403 owner_session_required, and accepts the session cookie', async () => {
    const token = await accessToken(app, owner);
    const cookie = await sessionCookie(app, owner);
    for (const op of contractOperations().filter((o) => o.sessionOnly)) {
      const refused = await send(op, bearerOf(token));
      expect({ op: op.operationId, status: refused.status, code: refused.body.error?.code }).toEqual({
        op: op.operationId,
        status: 403,
        code: 'owner_session_required',
      });
      const allowed = await send(op, { cookie, origin: BASE_URL });
      expect({ op: op.operationId, passed: ![401, 403].includes(allowed.status) }).toEqual({ op: op.operationId, passed: true });
    }
  });
});

describe('cross-site requests with the session cookie', () => {
  const create = (headers: Record<string, string>) =>
    call(app, 'POST', '/api/v1/jobs', { headers, body: { name: 'Triage', promptTemplate: 'Go' } });

  it('refuses an unsafe request from another origin', async () => {
    const cookie = await sessionCookie(app, owner);
    const res = await create({ cookie, origin: 'https://evil.example' });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('cross_site_request');
  });

  it('refuses an unsafe request that shows neither Origin nor Sec-Fetch-Site', async () => {
    const cookie = await sessionCookie(app, owner);
    const res = await create({ cookie });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('cross_site_request');
    expect((await create({ cookie, 'sec-fetch-site': 'none' })).body.error.code).toBe('cross_site_request');
  });

  it('accepts Sec-Fetch-Site: same-origin when the browser sends no Origin, or Origin: null', async () => {
    const cookie = await sessionCookie(app, owner);
    expect((await create({ cookie, 'sec-fetch-site': 'same-origin' })).status).toBe(201);
    expect((await create({ cookie, origin: 'null', 'sec-fetch-site': 'same-origin' })).status).toBe(201);
    expect((await create({ cookie, origin: 'null' })).body.error.code).toBe('cross_site_request');
  });

  it('refuses an unsafe request a browser marks cross-site', async () => {
    const cookie = await sessionCookie(app, owner);
    expect((await create({ cookie, 'sec-fetch-site': 'cross-site' })).body.error.code).toBe('cross_site_request');
  });

  it('lets same-origin requests and safe methods through', async () => {
    const cookie = await sessionCookie(app, owner);
    expect((await create({ cookie, origin: BASE_URL, 'sec-fetch-site': 'same-origin' })).status).toBe(201);
    expect((await me({ cookie, origin: 'https://evil.example' })).status).toBe(200);
  });

  it('does not apply to bearer tokens, which browsers never send on their own', async () => {
    const token = await accessToken(app, owner);
    expect((await create({ ...bearerOf(token), origin: 'https://evil.example' })).status).toBe(201);
  });
});

describe('the svc_session cookie as issued', () => {
  async function issue(baseUrl: URL): Promise<string[]> {
    const { token, expiresAt } = await app.sessions.create(owner.ownerId, owner.tenantId);
    const issuer = express()
      .use(cookieParser(app.cookieSecret))
      .get('/', (_req, res) => void res.cookie(SESSION_COOKIE, token, sessionCookieOptions(baseUrl, expiresAt)).end());
    return (await request(issuer).get('/')).headers['set-cookie'] as unknown as string[];
  }

  it('is HttpOnly, SameSite=Lax, for the whole site, and not Secure over http', async () => {
    const [cookie] = await issue(new URL(BASE_URL));
    expect(cookie).toMatch(/; Path=\/;/);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Expires=/);
    expect(cookie).not.toMatch(/; Secure/);
  });

  it('is Secure when the service is served over https', async () => {
    const [cookie] = await issue(new URL('https://flows.example.com'));
    expect(cookie).toMatch(/; Secure/);
  });

  it('authenticates API calls as issued', async () => {
    const [cookie] = await issue(new URL(BASE_URL));
    const res = await me({ cookie: cookie.split(';')[0] });
    expect(res.status).toBe(200);
    expect(res.body.owner.id).toBe(owner.ownerId);
  });
});
