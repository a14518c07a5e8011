// The auth matrix of /api/v1, generated from the contract: every operation, by the credentials its `security`
// names (the document's security schemes say which is a bearer token and which the session cookie) and the
// scopes it lists, is called with no credential; with bearer tokens that are expired, revoked, of a revoked
// client, for another resource, lacking its scopes; with a bearer where only the owner session is taken;
// with session cookies that are expired or of another instance, and from other sites; and with the ids of
// another tenant's real resources. Each answer must be the refusal the contract documents, exactly
// `{ error: { code, message } }`, and give away nothing of the other tenant; a control with the right
// credential shows that each refusal is the credential's. A new operation is covered once the contract has it.
import { Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sign } from 'cookie-signature';
import request, { type Response } from 'supertest';
import { SESSION_COOKIE } from '../../src/auth/session-service';
import { createHttpServer } from '../../src/http/server';
import { BASE_URL, startTestApp, type TestApp } from '../support/app';
import { contractProblems, exampleIds, exampleUrls, operationsOf, urlOf, withIds, type Operation } from '../support/contract-operations';
import { startFakeProviders, type FakeProviders } from '../support/fake-providers';
import { call } from '../support/http';
import { accessToken, createOwner, registerTestClient, sessionCookie } from '../support/identity';
import { createTenant, FIXTURE_CONFIG, startEventReceiver, type Tenant } from '../support/tenant-fixtures';

jest.setTimeout(120_000);

const SAFE = new Set(['GET', 'HEAD']);
const SCOPES = ['flows:read', 'flows:write', 'runs:read', 'runs:write'];

/** One request of the matrix and what its answer must be. */
interface Row {
  op: Operation;
  label: string;
  url: string;
  headers: Record<string, string>;
  body?: unknown;
  expect(res: Response): string | null;
}

let app: TestApp, server: Server, base: string, ops: Operation[];
let providers: FakeProviders, receiver: Awaited<ReturnType<typeof startEventReceiver>>;
let ours: Tenant, theirs: Tenant;
let oursMap: Map<string, string>, theirsMap: Map<string, string>;
let sent = 0;
/** Requests of the matrix per test, for the summary. */
const counts = new Map<string, number>();
// Idle connections close here before the server's keep-alive timeout could close one under a new request.
const keepAlive = new Agent({ keepAlive: true, maxSockets: 4, timeout: 2_000 });

beforeAll(async () => {
  const unlimited = { points: 1_000_000, durationSeconds: 60 };
  providers = await startFakeProviders();
  receiver = await startEventReceiver();
  app = await startTestApp(FIXTURE_CONFIG, { policies: { api: unlimited, apiIp: unlimited } });
  server = createHttpServer(app.app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  ours = await createTenant(app, { label: 'Ours', providersUrl: providers.url, receiverUrl: receiver.url });
  theirs = await createTenant(app, { label: 'Theirs', providersUrl: providers.url, receiverUrl: receiver.url });
  ops = operationsOf(app);
  oursMap = new Map([...exampleUrls(ops, receiver.url), ...exampleIds(ops, ours.ids)]);
  theirsMap = new Map([...exampleUrls(ops, receiver.url), ...exampleIds(ops, theirs.ids)]);
});
afterAll(async () => {
  keepAlive.destroy();
  try {
    await new Promise((resolve) => server.close(resolve));
    await app.close();
  } finally {
    await providers.close();
    await receiver.close();
  }
  console.log(`auth-matrix.test.ts sent ${sent} requests for ${ops?.length ?? 0} operations:\n${[...counts].map(([test, n]) => `  ${n} ${test}`).join('\n')}`);
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const scopedTokens = new Map<string, Promise<string>>();
/** A token of the first tenant's owner holding exactly `scopes`, made once per set. */
const scoped = (scopes: string[]) => {
  const key = [...scopes].sort().join(' ');
  if (!scopedTokens.has(key)) scopedTokens.set(key, accessToken(app, ours.owner, { scopes }));
  return scopedTokens.get(key)!;
};

const sessionOnly = (op: Operation) => op.session && !op.bearer;
/** The credential that gets the first tenant's owner past authorization for `op`. */
const oursFor = (op: Operation) => (op.bearer ? ours.bearer : ours.session);
/** The example body, with the ids of `map`. */
const bodyOf = (op: Operation, map = oursMap) => (op.body ? withIds(op.body.example, map) : undefined);
const row = (op: Operation, label: string, headers: Record<string, string>, expect: Row['expect'], url = urlOf(op), body = bodyOf(op)): Row => ({ op, label, url, headers, body, expect });

const refused = (status: number, code: string, challenge?: RegExp) => (res: Response) =>
  res.status === status && res.body?.error?.code === code && (!challenge || challenge.test(res.headers['www-authenticate'] ?? ''))
    ? null
    : `expected ${status} ${code}${challenge ? ` with WWW-Authenticate ${challenge}` : ''}, got ${res.status} ${res.body?.error?.code ?? ''} (WWW-Authenticate: ${res.headers['www-authenticate'] ?? 'none'})`;
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const passes = (res: Response) => (res.status === 401 || res.status === 403 ? `expected the credential to pass, got ${res.status} ${res.body?.error?.code}` : null);

async function send(r: Row): Promise<Response> {
  let test = ((request(base) as any)[r.op.method.toLowerCase()](r.url) as request.Test).agent(keepAlive);
  for (const [name, value] of Object.entries(r.headers)) test = test.set(name, value);
  if (r.body !== undefined) test = test.set('content-type', 'application/json').send(JSON.stringify(r.body));
  sent++;
  return test.timeout(30_000).ok(() => true);
}

/**
 * A path parameter with a pattern is a name the client chose (a secret's), unique within its tenant, which
 * another tenant may use too; the others are opaque identifiers, which belong to one tenant.
 */
const isName = (op: Operation, param: string) => Boolean(op.pathParams.find((p) => p.name === param)?.schema?.pattern);
const nameParams = () => new Set(ops.flatMap((op) => op.pathParams.filter((p) => isName(op, p.name)).map((p) => p.name)));
/** The other tenant's identifiers (not its names, which the first tenant may hold too). */
const theirIds = () => Object.entries(theirs.ids).filter(([param]) => !nameParams().has(param)).map(([, id]) => id);

/** Identifiers of the other tenant, or its label, that an answer to `r` shows without the request having named them. */
function leaked(r: Row, res: Response): string[] {
  const asked = `${r.url} ${JSON.stringify(r.body ?? '')}`;
  const text = `${res.text ?? ''} ${JSON.stringify(res.headers)}`;
  return [theirs.label, ...theirIds()].filter((value) => text.includes(value) && !asked.includes(value));
}

/** What is wrong with the answer to `r`: its own rule, the error shape, what the contract documents, a leak. */
function problemsOf(r: Row, res: Response): string[] {
  const problems: string[] = [];
  const expected = r.expect(res);
  if (expected) problems.push(expected);
  if (res.status >= 400) {
    const body = res.body;
    const shaped = body && Object.keys(body).join() === 'error' && Object.keys(body.error ?? {}).sort().join() === 'code,message' &&
      typeof body.error.code === 'string' && typeof body.error.message === 'string';
    if (!shaped) problems.push(`${res.status} not exactly { error: { code, message } }`);
  }
  if (res.status === 401 && !/^Bearer realm="flows"/.test(res.headers['www-authenticate'] ?? '')) problems.push('401 without a Bearer challenge');
  problems.push(...contractProblems(r.op, r.op.method, res));
  const shown = leaked(r, res);
  if (shown.length) problems.push(`shows the other tenant's ${shown.join(', ')}`);
  return problems;
}

/** Sends every row (a few at a time) and fails listing every problem. */
async function check(rows: Row[]) {
  const failures: string[] = [];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < rows.length; i = next++) {
      const r = rows[i];
      const res = await send(r).catch((err: Error) => err);
      if (res instanceof Error) {
        failures.push(`${r.op.id} (${r.op.method} ${r.url}) ← ${r.label}: no answer: ${res.message}`);
        continue;
      }
      for (const problem of problemsOf(r, res)) failures.push(`${r.op.id} (${r.op.method} ${r.url}) ← ${r.label}: ${problem}`);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  counts.set(expect.getState().currentTestName ?? '', rows.length);
  expect(failures.sort()).toEqual([]);
}

const invalidToken = refused(401, 'invalid_token', /error="invalid_token"/);

describe('the auth matrix of every operation, from its security requirements', () => {
  it('covers every operation: each names the credentials it takes, and each path parameter has a real resource in both tenants', () => {
    expect(ops.filter((op) => !op.bearer && !op.session).map((op) => op.id)).toEqual([]);
    const params = [...new Set(ops.flatMap((op) => op.pathParams.map((p) => p.name)))];
    expect(params.filter((name) => !ours.ids[name] || !theirs.ids[name])).toEqual([]);
  });

  it('no credential: 401 unauthenticated with a Bearer challenge naming the resource metadata', () =>
    check(ops.map((op) => row(op, 'no credential', {}, refused(401, 'unauthenticated', new RegExp(`^Bearer realm="flows", resource_metadata="${escaped(BASE_URL)}/\\.well-known/oauth-protected-resource/api/v1"$`))))));

  it('a bearer token that is expired, revoked, of a revoked client, or for another resource: 401 invalid_token', async () => {
    const expired = await accessToken(app, ours.owner, { expiresIn: -1 });
    // Revoked through the API, as the owner does it: the token itself, and the client it was issued to.
    const before = (await call(app, 'GET', '/api/v1/access-tokens', { headers: ours.session })).body.map((t: { id: string }) => t.id);
    const revoked = await accessToken(app, ours.owner);
    const tokenId = (await call(app, 'GET', '/api/v1/access-tokens', { headers: ours.session })).body.map((t: { id: string }) => t.id).find((id: string) => !before.includes(id));
    expect((await call(app, 'DELETE', `/api/v1/access-tokens/${tokenId}`, { headers: ours.session })).status).toBe(204);
    const clientId = await registerTestClient(app, 'Revoked client');
    const ofRevokedClient = await accessToken(app, ours.owner, { clientId });
    expect((await call(app, 'DELETE', `/api/v1/authorized-clients/${clientId}`, { headers: ours.session })).status).toBe(204);
    const forMcp = await accessToken(app, ours.owner, { resource: `${BASE_URL}/mcp` });
    const forElsewhere = await accessToken(app, ours.owner, { resource: 'https://elsewhere.example/api/v1' });
    const kinds: [string, string][] = [['expired', expired], ['revoked', revoked], ['of a revoked client', ofRevokedClient], ['for the MCP endpoint', forMcp], ['for another API', forElsewhere]];
    await check(ops.flatMap((op) => kinds.map(([label, token]) => row(op, `bearer ${label}`, bearer(token), invalidToken))));
  });

  it('a bearer token without the operation\'s scope: 403 insufficient_scope naming it; with exactly its scopes, through', async () => {
    const rows: Row[] = [];
    for (const op of ops.filter((o) => o.bearer)) {
      const exactly = await scoped(op.scopes);
      rows.push(row(op, `bearer with exactly ${op.scopes.join(' ') || 'no scope'}`, bearer(exactly), passes));
      if (!op.scopes.length) continue;
      const named = new RegExp(`error="insufficient_scope", scope="(${op.scopes.join('|')})"`);
      rows.push(row(op, 'bearer with every other scope', bearer(await scoped(SCOPES.filter((s) => !op.scopes.includes(s)))), refused(403, 'insufficient_scope', named)));
      rows.push(row(op, 'bearer with no scope', bearer(await scoped([])), refused(403, 'insufficient_scope', named)));
    }
    await check(rows);
  });

  it('a bearer token holding every scope on an owner-session-only operation: 403 owner_session_required; the session, through', () =>
    check(ops.filter(sessionOnly).flatMap((op) => [
      row(op, 'bearer with every scope', ours.bearer, refused(403, 'owner_session_required')),
      row(op, 'owner session', ours.session, passes),
    ])));

  it('a session cookie that is expired, of another instance, or not signed: 401 invalid_session', async () => {
    const leaver = await createOwner(app.database.db);
    const expired = await sessionCookie(app, leaver);
    await app.database.db.session.updateMany({ where: { ownerId: leaver.ownerId }, data: { expiresAt: new Date(Date.now() - 1000) } });
    // A real session of this owner, signed by another instance's secret.
    const { token } = await app.sessions.create(ours.owner.ownerId, ours.owner.tenantId);
    const foreign = `${SESSION_COOKIE}=${encodeURIComponent(`s:${sign(token, 'the secret of another instance')}`)}`;
    const kinds: [string, string][] = [['expired', expired], ['of another instance', foreign], ['not signed', `${SESSION_COOKIE}=${token}`]];
    await check(ops.filter((op) => op.session).flatMap((op) => kinds.map(([label, cookie]) => row(op, `session ${label}`, { cookie, origin: BASE_URL }, refused(401, 'invalid_session')))));
  });

  it('the session cookie from another site on an unsafe method: 403 cross_site_request; from this origin, or on a safe method, through', () => {
    const { cookie } = ours.session;
    const other: [string, Record<string, string>][] = [
      ['Origin of another site', { origin: 'https://evil.example' }],
      ['Origin on another port', { origin: 'http://localhost:3001' }],
      ['Origin over https', { origin: 'https://localhost:3000' }],
      ['Origin of a subdomain', { origin: 'http://app.localhost:3000' }],
      ['Origin that starts like this one', { origin: 'http://localhost:3000.evil.example' }],
      ['Origin null alone', { origin: 'null' }],
      ['Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site' }],
      ['Sec-Fetch-Site same-site', { 'sec-fetch-site': 'same-site' }],
      ['Sec-Fetch-Site none', { 'sec-fetch-site': 'none' }],
      ['neither Origin nor Sec-Fetch-Site', {}],
      ['Origin of another site with Sec-Fetch-Site same-origin', { origin: 'https://evil.example', 'sec-fetch-site': 'same-origin' }],
    ];
    const same: [string, Record<string, string>][] = [
      ['Origin of this service', { origin: BASE_URL }],
      ['Sec-Fetch-Site same-origin without Origin', { 'sec-fetch-site': 'same-origin' }],
      ['Origin null with Sec-Fetch-Site same-origin', { origin: 'null', 'sec-fetch-site': 'same-origin' }],
    ];
    return check(ops.filter((op) => op.session).flatMap((op) => [
      ...other.map(([label, headers]) => row(op, `session, ${label}`, { cookie, ...headers }, SAFE.has(op.method) ? passes : refused(403, 'cross_site_request'))),
      ...same.map(([label, headers]) => row(op, `session, ${label}`, { cookie, ...headers }, passes)),
    ]));
  });
});

describe('another tenant\'s resources', () => {
  const snapshots = new Map<string, string>();
  // Usage's window ends now unless given one: read with a window fixed around the whole test.
  const day = 86_400_000;
  const usageWindow = `?since=${new Date(Date.now() - day).toISOString()}&until=${new Date(Date.now() + day).toISOString()}`;
  // Everything of theirs, as its owner reads it (the session: reading leaves their tokens' last use alone).
  const readTheirs = async () => {
    const reads = new Map<string, string>();
    for (const op of ops.filter((o) => o.method === 'GET')) {
      const res = await call(app, 'GET', urlOf(op, theirs.ids, op.id === 'getUsage' ? usageWindow : ''), { headers: theirs.session });
      reads.set(op.id, `${res.status} ${res.text}`);
    }
    return reads;
  };

  beforeAll(async () => {
    // A run of theirs that spent something, so that their usage is more than zeros.
    const usage = { inputTokens: 1200, outputTokens: 80, cachedTokens: 0, turns: 2, costUsd: 0.02, costSource: 'reported' };
    await app.database.db.run.update({ where: { id: theirs.ids.runId }, data: { usage } });
    for (const [id, read] of await readTheirs()) snapshots.set(id, read);
  });

  it('are real: their owner reads each of them', () => {
    expect([...snapshots].filter(([, read]) => !read.startsWith('200 ')).map(([id, read]) => `${id}: ${read.slice(0, 120)}`)).toEqual([]);
  });

  // A PUT by name makes the first tenant's own resource of that name (below); every other request is 404.
  const putsByName = (op: Operation) => op.method === 'PUT' && op.pathParams.some((p) => isName(op, p.name));

  it('named in the path: 404 not_found, whichever parameter is theirs', () =>
    check(ops.filter((op) => op.pathParams.length && !putsByName(op)).flatMap((op) => {
      const all = row(op, 'every path id theirs', oursFor(op), refused(404, 'not_found'), urlOf(op, theirs.ids));
      const each = op.pathParams.length < 2 ? [] : op.pathParams.map((p) => row(op, `${p.name} theirs`, oursFor(op), refused(404, 'not_found'), urlOf(op, { ...ours.ids, [p.name]: theirs.ids[p.name] })));
      return [all, ...each];
    })));

  it('named in a query filter: an empty list or 404, nothing of theirs', () =>
    check(ops.flatMap((op) => op.query.filter((q) => theirs.ids[q.name]).map((q) => row(op, `query ${q.name} theirs`, oursFor(op), (res) =>
      (res.status === 404 && res.body?.error?.code === 'not_found') || (res.status === 200 && Array.isArray(res.body) && res.body.length === 0)
        ? null : `expected 404 or an empty list, got ${res.status} ${res.text.slice(0, 120)}`,
      urlOf(op, ours.ids, `?${q.name}=${encodeURIComponent(theirs.ids[q.name])}`))))));

  it('named in a body: never a 5xx, nothing of theirs shown, nothing of ours made to point at them', async () => {
    const rows = ops.filter((op) => op.body && JSON.stringify(bodyOf(op, theirsMap)) !== JSON.stringify(bodyOf(op)))
      .map((op) => row(op, 'body ids theirs', oursFor(op), (res) => (res.status >= 500 ? `${res.status}` : null), urlOf(op, ours.ids), bodyOf(op, theirsMap)));
    expect(rows.length).toBeGreaterThan(0);
    await check(rows);
    expect(await oursPointingAtTheirs()).toEqual([]);
  });

  // The body test above may have made one of that name already (the example names the secret of the path).
  it('by a name they use: a PUT makes or replaces the first tenant\'s own of that name', () =>
    check(ops.filter(putsByName).map((op) => row(op, 'a name theirs uses', oursFor(op), (res) => ([200, 201].includes(res.status) ? null : `expected 200 or 201, got ${res.status}`), urlOf(op, theirs.ids)))));

  it('are left as they were by all of that', async () => {
    const after = await readTheirs();
    expect([...after].filter(([id, read]) => read !== snapshots.get(id)).map(([id, read]) => `${id}: ${snapshots.get(id)?.slice(0, 200)} → ${read.slice(0, 200)}`)).toEqual([]);
  });
});

/** Rows of the first tenant, in any table, that hold an id of the other tenant's resources. */
async function oursPointingAtTheirs(): Promise<string[]> {
  const db = app.database.db;
  const sqlite = app.config.databaseProvider === 'sqlite';
  const tables = await db.$queryRawUnsafe<{ name: string }[]>(
    sqlite
      ? `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '\\_prisma%' ESCAPE '\\'`
      : `SELECT tablename::text AS name FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE '\\_prisma%'`,
  );
  const ids = theirIds();
  const found: string[] = [];
  for (const { name } of tables) {
    for (const r of await db.$queryRawUnsafe<Record<string, unknown>[]>(`SELECT * FROM "${name}"`)) {
      if (r.tenantId !== ours.owner.tenantId) continue;
      const text = JSON.stringify(r, (_key, value) => (typeof value === 'bigint' ? String(value) : value));
      for (const id of ids.filter((id) => text.includes(id))) found.push(`${name} row ${String(r.id ?? '')} holds ${id}`);
    }
  }
  return found;
}
