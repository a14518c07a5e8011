// Contract-driven fuzzing of /api/v1: for every operation of openapi/openapi.yaml, valid requests on real
// resources of a tenant (made through the API first), and around them requests with malformed paths and
// queries, wrong types, huge and deeply nested bodies, Unicode at its edges, other media types, methods and
// credentials (test/support/fuzz-cases.ts), sent over kept-alive connections to a listening server. Every
// answer must carry `Cache-Control: no-store`; never be a 5xx (but 501 for operations not built yet), a
// stack trace or an echo of huge input; be documented by its operation, a success with a body matching the
// documented schema and an error exactly `{ error: { code, message } }` with a code its status documents.
// Failures are collected, grouped by kind and reported together, so one run shows everything broken.
import { Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request, { type Response } from 'supertest';
import { createHttpServer } from '../../src/http/server';
import { isUsableDateTime } from '../../src/lib/instants';
import { BASE_URL, startTestApp, type TestApp } from '../support/app';
import { contractProblems, exampleIds, exampleUrls, METHODS, operationsOf, urlOf, type Operation } from '../support/contract-operations';
import { startFakeProviders, type FakeProviders } from '../support/fake-providers';
import { DATE_TIMES, generate, pick, rand, type Case, type Kind, type Targets } from '../support/fuzz-cases';
import { accessToken, sessionCookie } from '../support/identity';
import { createTenant, FIXTURE_APP_KEY, FIXTURE_CONFIG, startEventReceiver, type Tenant } from '../support/tenant-fixtures';

jest.setTimeout(300_000);

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const MAX_MESSAGE = 1_000;
const CONCURRENCY = 8;

interface Failure { kind: string; method: string; url: string; status: number; excerpt: string }

let app: TestApp, server: Server, base: string, ops: Operation[], tenant: Tenant, targets: Targets;
let providers: FakeProviders, receiver: Awaited<ReturnType<typeof startEventReceiver>>;
let creds: Record<'all' | 'none' | 'cookie', Record<string, string>>;
const sent = new Map<Kind, number>();
/** Operations that answered a valid request with a 2xx whose body matched the contract. */
const succeeded = new Set<string>();
// An idle connection is closed here before the server's keep-alive timeout (5 s) can close it under a request
// just sent on it, which the client would see as a hang-up.
const keepAlive = new Agent({ keepAlive: true, maxSockets: CONCURRENCY, timeout: 2_000 });

beforeAll(async () => {
  const unlimited = { points: 1_000_000, durationSeconds: 60 };
  providers = await startFakeProviders();
  receiver = await startEventReceiver();
  app = await startTestApp(FIXTURE_CONFIG, { policies: { api: unlimited, apiIp: unlimited } });
  server = createHttpServer(app.app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  tenant = await createTenant(app, { label: 'Fuzzed', providersUrl: providers.url, receiverUrl: receiver.url });
  creds = {
    all: tenant.bearer,
    none: { authorization: `Bearer ${await accessToken(app, tenant.owner, { scopes: [] })}` },
    cookie: { cookie: await sessionCookie(app, tenant.owner) },
  };
  ops = operationsOf(app);
  targets = await targetsOf(ops, tenant);
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
  const total = [...sent.values()].reduce((a, b) => a + b, 0);
  console.log(`fuzz.test.ts sent ${total} requests for ${ops?.length ?? 0} operations: ${[...sent].map(([kind, n]) => `${kind} ${n}`).join(', ')}`);
});

/** The key of the resource an operation acts on: its last path parameter, or its path for a singleton. */
const resourceOf = (op: Operation) => op.pathParams.at(-1)?.name ?? op.template;
// Stopping needs a run that is still going; every other operation takes a new resource of its kind.
const NEEDS_ACTIVE_RUN = new Set(['stopRun']);

/**
 * Safe operations read the shared resources. An operation that changes its resource gets one of its own for
 * its generated requests (disabling or deleting it then spoils no other operation's requests), and a new one
 * for each valid request, which must succeed.
 */
async function targetsOf(ops: Operation[], tenant: Tenant): Promise<Targets> {
  const own = new Map<string, Record<string, string>>();
  for (const op of ops.filter((o) => o.method !== 'GET' && o.pathParams.length && tenant.fresh[resourceOf(o)])) {
    own.set(op.id, { ...tenant.ids, [resourceOf(op)]: await tenant.fresh[resourceOf(op)]() });
  }
  return {
    idsOf: (op) => own.get(op.id) ?? tenant.ids,
    async freshIds(op) {
      if (op.method === 'GET') return {};
      if (NEEDS_ACTIVE_RUN.has(op.id)) return { runId: await tenant.activeRun() };
      const make = tenant.fresh[resourceOf(op)];
      if (!make) return {};
      const id = await make();
      return op.pathParams.length ? { [resourceOf(op)]: id } : {};
    },
    // The contract's example key is cut short: a valid request sends a whole one.
    map: new Map([...exampleUrls(ops, receiver.url), ...exampleIds(ops, tenant.ids), [ops.find((op) => op.id === 'createGithubApp')!.body!.example.privateKey, FIXTURE_APP_KEY]]),
  };
}

/** The operation the router picks (as openapi-backend does: by template, the most specific first), if any. */
function routeOf(c: Case): Operation | undefined {
  const path = c.url.split('?')[0];
  const specificity = (op: Operation) => op.template.replace(/\{\w+\}/g, '').length;
  const method = c.method === 'HEAD' ? 'GET' : c.method;
  return ops.filter((op) => op.method === method && op.pattern.test(path)).sort((a, b) => specificity(b) - specificity(a))[0];
}

/** The checks every answer must pass; each problem found is a failure kind. */
function problemsOf(c: Case, res: Response): string[] {
  const problems: string[] = [];
  const op = routeOf(c);
  const code = res.body?.error?.code;
  const answered = `${res.status}${code ? ` ${code}` : ''}`;
  // 501 only as not_implemented (a HEAD answer has no body to tell), for an operation without a handler that documents it.
  const notBuilt = res.status === 501 && (code === 'not_implemented' || c.method === 'HEAD') && op && !op.implemented && op.responses['501'];
  if (res.status >= 500 && !notBuilt) problems.push(answered);
  // A date-time answered must have four digits of year: no `-000001-…` or `+275760-…`.
  if (res.status < 300 && /"[+-]\d{6}-\d\d-\d\dT/.test(res.text ?? '')) problems.push('a date outside date-time answered');
  if (!res.headers['cache-control']?.includes('no-store')) problems.push('no Cache-Control: no-store');
  if (/\n\s+at \S|[/\\](src|node_modules|work)[/\\]|\.[tj]s:\d+/.test(res.text ?? '')) problems.push('stack trace or file path in body');
  if (c.method !== 'HEAD' && res.status >= 400) {
    const body = res.body;
    const shaped = body && typeof body === 'object' && Object.keys(body).join() === 'error' && body.error && Object.keys(body.error).sort().join() === 'code,message';
    if (!shaped || typeof code !== 'string' || typeof body.error.message !== 'string') problems.push(`${res.status} not the error shape`);
    else if (!/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/.test(code)) problems.push(`code not snake_case: ${code}`);
    if (shaped && String(body.error.message).length > MAX_MESSAGE) problems.push(`message longer than ${MAX_MESSAGE} chars`);
    if (res.status === 401 && !res.headers['www-authenticate']) problems.push('401 without WWW-Authenticate');
    if (res.status === 405 && !res.headers.allow) problems.push('405 without Allow');
    // A message that points to another operation must point to one the contract has.
    for (const [named] of String(body?.error?.message ?? '').matchAll(/\/api\/v1\/[\w{}/-]+/g)) {
      if (!ops.some((o) => o.template === named || o.pattern.test(named))) problems.push(`message names ${named}, which the contract does not have`);
    }
  }
  // What the operation documents; the server refuses an oversized request line before routing, on any path.
  if (op && res.status !== 431) problems.push(...contractProblems(op, c.method, res));
  if (op && c.kind === 'valid' && res.status < 300 && problems.length === 0) succeeded.add(op.id);
  // A request the contract refuses must be refused: no success, no 501 that skipped validation.
  if (c.invalid && (res.status < 400 || res.status === 501)) problems.push(`invalid request answered ${res.status}`);
  const expected = c.expect?.(res);
  if (expected) problems.push(`${expected}, got ${answered}`);
  return problems;
}

async function send(c: Case, extra: Record<string, string> = {}): Promise<Response> {
  let test = ((request(base) as any)[c.method.toLowerCase()](c.url) as request.Test).agent(keepAlive);
  for (const [name, value] of Object.entries({ ...c.headers, ...extra })) test = test.set(name, value);
  // The bytes go out exactly as generated: no serializer may turn them into JSON.
  if (c.body !== undefined) test = test.serialize((raw: unknown) => raw as string).send(Buffer.from(c.body));
  sent.set(c.kind, (sent.get(c.kind) ?? 0) + 1);
  return test.timeout(30_000).ok(() => true);
}

/**
 * Sends every case (a few at a time), runs the checks plus `also`, and fails with a grouped summary. With
 * `build`, valid requests are made just before sending: new resources, names not taken yet.
 */
async function fuzz(list: Case[], extra: Record<string, string>, { also, build = false }: { also?: (c: Case, res: Response) => string | null; build?: boolean } = {}) {
  const failures: Failure[] = [];
  const check = async (c: Case) => {
    const res = await send(c, extra).catch((err: Error) => err);
    if (res instanceof Error) return void failures.push({ kind: `no answer: ${res.message} ← ${c.gen}`, method: c.method, url: c.url.slice(0, 90), status: 0, excerpt: '' });
    const problems = problemsOf(c, res);
    const kinds = problems.map((p) => (p.startsWith('no Cache') ? p : `${p} ← ${c.gen}`));
    // The rule of a whole block is one kind, whatever the generator.
    const more = also?.(c, res);
    if (more) kinds.push(more);
    const url = c.url.length > 90 ? `${c.url.slice(0, 70)}…(${c.url.length} chars)` : c.url;
    for (const kind of kinds) failures.push({ kind, method: c.method, url, status: res.status, excerpt: (res.text ?? '').slice(0, 160) });
  };
  // Valid requests one at a time, deletions last, each on what it was built: nothing else can delete a
  // singleton (the agent integration) between its making and its use.
  const first = build ? list.filter((c) => c.build).sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE')) : [];
  if (build) for (const [key, make] of Object.entries(tenant.fresh)) if (key.startsWith('/')) await make();
  for (const c of first) await check({ ...c, ...(await c.build!()) });
  const rest = list.filter((c) => !first.includes(c));
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < rest.length; i = next++) await check(rest[i]);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  expect(summarize(failures, list.length)).toBe('no failures');
}

function summarize(failures: Failure[], total: number): string {
  if (failures.length === 0) return 'no failures';
  const kinds = new Map<string, Failure[]>();
  for (const f of failures) kinds.set(f.kind, [...(kinds.get(f.kind) ?? []), f]);
  const lines = [...kinds.entries()].sort((a, b) => b[1].length - a[1].length).slice(0, 30)
    .map(([kind, [f, ...rest]]) => `  ${rest.length + 1}× ${kind}\n      e.g. ${f.method} ${f.url} → ${f.status} ${f.excerpt}`);
  return `${failures.length} failures of ${kinds.size} kinds in ${total} requests:\n${lines.join('\n')}${kinds.size > 30 ? `\n  …and ${kinds.size - 30} more kinds` : ''}`;
}

const notSuccess = (_c: Case, res: Response) => (res.status < 300 ? `${res.status} success` : null);
/** A valid request, on resources of its own, with credentials the operation takes, succeeds. */
const validSucceeds = (accepted: (op: Operation) => boolean) => (c: Case, res: Response) =>
  c.gen === 'valid' && accepted(c.op) && res.status >= 300 ? `valid request of ${c.op.id} answered ${res.status} ${res.body?.error?.code ?? ''}` : null;

describe('contract fuzzing of /api/v1', () => {
  it('without credentials: never a success, never a crash', () => fuzz(generate(ops, targets), {}, { also: notSuccess }));

  it('with a bearer token holding every scope: valid requests succeed', () =>
    fuzz(generate(ops, targets), creds.all, { build: true, also: validSucceeds((op) => op.bearer) }));

  it('with a bearer token holding no scope: only scope-free operations succeed', () =>
    fuzz(generate(ops, targets), creds.none, { also: (c, res) => (routeOf(c)?.scopes.length ? notSuccess(c, res) : null) }));

  it('with an owner session from the same origin: valid requests succeed', () =>
    fuzz(generate(ops, targets), { ...creds.cookie, origin: BASE_URL }, { build: true, also: validSucceeds((op) => op.session) }));

  it('with an owner session on unsafe methods without Origin or Sec-Fetch-Site: 403 cross_site_request', () =>
    fuzz(generate(ops, targets).filter((c) => UNSAFE.has(c.method)), creds.cookie, {
      also: (c, res) => {
        // The request line is read (431), the path decoded and routed, and the body read (415, 413, invalid JSON,
        // nesting, text no database stores), before credentials.
        if (!routeOf(c) || (c.preAuth && [400, 413, 415, 431].includes(res.status))) return null;
        return res.status === 403 && res.body?.error?.code === 'cross_site_request' ? null : `expected 403 cross_site_request, got ${res.status} ${res.body?.error?.code ?? ''}`;
      },
    }));

  it('answered a valid request of every operation with a 2xx matching the contract', () => {
    expect(ops.map((op) => op.id).filter((id) => !succeeded.has(id))).toEqual([]);
  });

  it('answers HEAD like GET, and undocumented methods with 405 and Allow', async () => {
    const list: Case[] = [];
    const documented = new Map<string, string[]>();
    for (const op of ops) documented.set(op.template, [...(documented.get(op.template) ?? []), op.method]);
    // HEAD must answer with GET's status (Express serves HEAD from GET routes; there is no body to compare).
    for (const op of ops.filter((o) => o.method === 'GET')) {
      const url = urlOf(op, tenant.ids);
      const get = await send({ op, kind: 'method', gen: 'GET', method: 'GET', url }, creds.all);
      list.push({ op, kind: 'method', gen: 'HEAD like GET', method: 'HEAD', url, expect: (res) => (res.status === get.status ? null : `expected GET's ${get.status}`) });
    }
    for (const [template, allowed] of documented) {
      const op = ops.find((o) => o.template === template)!;
      for (const method of METHODS.map((m) => m.toUpperCase()).filter((m) => !allowed.includes(m))) {
        // Allow lists the documented methods, and HEAD may join GET (RFC 9110 section 9.3.2).
        const allowOk = (allow = '') => allow.split(/,\s*/).filter((m) => !(m === 'HEAD' && allowed.includes('GET'))).sort().join() === [...allowed].sort().join();
        const check = (res: Response) => (res.status === 405 && res.body?.error?.code === 'method_not_allowed' && allowOk(res.headers.allow)
          ? null : `expected 405 method_not_allowed with Allow: ${allowed.join(', ')} (got Allow: ${res.headers.allow ?? 'none'})`);
        list.push({ op, kind: 'method', gen: 'undocumented method', method, url: urlOf(op, tenant.ids), headers: { 'content-type': 'application/json' }, body: '{}', expect: check });
      }
    }
    await fuzz(list, creds.all);
  });

  it('backtests a real job over every window made of date-times at and past the edges of the range', async () => {
    const backtest = ops.find((op) => op.id === 'backtestJob')!;
    const list: Case[] = [];
    for (const since of [undefined, ...DATE_TIMES]) {
      for (const until of [undefined, ...DATE_TIMES]) {
        list.push({
          op: backtest, kind: 'date-time', gen: `backtest since ${since ?? '-'} until ${until ?? '-'}`, method: 'POST', url: `/api/v1/jobs/${tenant.ids.jobId}/backtest`,
          headers: { 'content-type': 'application/json' }, body: JSON.stringify({ since, until }),
          invalid: [since, until].some((at) => at !== undefined && !isUsableDateTime(at)),
          expect: (res) => (res.status === 200 || res.status === 400 ? null : 'expected 200 or 400'),
        });
      }
    }
    await fuzz(list, creds.all);
  });

  it('takes any generated input schema without a crash or a hang: refused at save, or applied to any data', async () => {
    const createJob = ops.find((op) => op.id === 'createJob')!;
    const invokeJob = ops.find((op) => op.id === 'invokeJob')!;
    const failures: Failure[] = [];
    const post = (op: Operation, gen: string, url: string, value: unknown): Case => ({ op, kind: 'input schema', gen, method: 'POST', url, headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) });
    const check = async (c: Case, allowed: number[]) => {
      const res = await send(c, creds.all);
      const problems = problemsOf(c, res);
      if (!allowed.includes(res.status)) problems.push(`${res.status} ${res.body?.error?.code ?? ''}, expected one of ${allowed.join(', ')}`);
      for (const kind of problems) failures.push({ kind: `${kind} ← ${c.gen}`, method: c.method, url: c.url, status: res.status, excerpt: `${(res.text ?? '').slice(0, 120)} for ${String(c.body).slice(0, 200)}` });
      return res;
    };
    let saved = 0;
    for (let i = 0; i < 150; i++) {
      const inputSchema = randomInputSchema();
      const job = await check(post(createJob, 'generated input schema', '/api/v1/jobs', { name: `Schema ${i}`, promptTemplate: 'x', triggers: [{ type: 'invocation', inputSchema }] }), [201, 400]);
      if (job.status === 400) {
        if (!['invalid_input_schema', 'validation_failed'].includes(job.body?.error?.code)) failures.push({ kind: `refused with ${job.body?.error?.code}`, method: 'POST', url: '/api/v1/jobs', status: 400, excerpt: JSON.stringify(inputSchema).slice(0, 200) });
        continue;
      }
      saved++;
      for (let j = 0; j < 4; j++) {
        await check(post(invokeJob, 'data for a generated input schema', `/api/v1/jobs/${job.body.id}/invocations`, { data: { a: randomData(10), b: randomData(3) } }), [202, 400]);
      }
    }
    expect(summarize(failures, 150)).toBe('no failures');
    // Both outcomes were generated: some schemas were refused, some kept and applied.
    expect(saved).toBeGreaterThan(10);
    expect(saved).toBeLessThan(140);
  });

  it('refuses a malformed Authorization header with 401 invalid_token', () => {
    const headers: [string, string][] = [
      ['Bearer', 'Bearer'], ['Bearer ', 'Bearer + space'], ['Basic eHh4Onh4eA==', 'Basic'], [`Bearer ${'t'.repeat(10 * 1024)}`, 'Bearer <10 KB>'],
      ['Bearer a b', 'Bearer a b'], ['Token abc', 'Token abc'], [`${creds.all.authorization}x`, 'Bearer <real token>x'],
      ['Bearer \u00e9t\u00e9', 'Bearer latin-1 text'],
    ];
    const list = ops.flatMap((op) => headers.map(([authorization, label]): Case => ({
      op, kind: 'credentials', gen: `Authorization: ${label}`, method: op.method, url: urlOf(op), ...(op.body ? { body: JSON.stringify(op.body.example) } : {}),
      headers: { ...(op.body ? { 'content-type': 'application/json' } : {}), authorization },
      expect: (res) => (res.status === 401 && res.body?.error?.code === 'invalid_token' ? null : 'expected 401 invalid_token'),
    })));
    return fuzz(list, {});
  });
});

/** A schema built from every kind of keyword, references that may loop, patterns RE2 refuses, and nesting. */
function randomSchema(depth: number): unknown {
  const leaves = [true, false, { type: 'string' }, { type: 'integer' }, { type: 'object' }, { $ref: '#' }, { $ref: '#/$defs/a' }, { $ref: '#/$defs/none' }, { $ref: 'other.json' },
    { $dynamicRef: '#x' }, { pattern: '^a+$' }, { pattern: '(a)\\1' }, { pattern: '^(a|a)*$' }, { const: 1 }, { type: 'nope' }, { $id: 'x' }];
  if (depth <= 0 || rand() < 0.3) return pick(leaves);
  const sub = () => randomSchema(depth - 1);
  const many = () => Array.from({ length: 1 + Math.floor(rand() * 3) }, sub);
  const makers: (() => Record<string, unknown>)[] = [
    () => ({ allOf: many() }), () => ({ anyOf: many() }), () => ({ oneOf: many() }), () => ({ not: sub() }), () => ({ if: sub(), then: sub(), else: sub() }),
    () => ({ type: 'object', properties: { a: sub(), b: sub() } }), () => ({ additionalProperties: sub() }), () => ({ patternProperties: { '^a': sub() } }),
    () => ({ items: sub() }), () => ({ prefixItems: many() }), () => ({ contains: sub() }), () => ({ dependentSchemas: { a: sub() } }),
    () => ({ unevaluatedProperties: sub() }), () => ({ propertyNames: sub() }), () => ({ $defs: { b: sub() }, $ref: '#/$defs/b' }),
  ];
  return { ...(pick(makers)() as object), ...(rand() < 0.2 ? (pick(leaves) as object) : {}) };
}
function randomInputSchema(): Record<string, unknown> {
  const body = randomSchema(4);
  return { $defs: { a: randomSchema(3) }, ...(typeof body === 'object' ? (body as object) : { not: body }) };
}
function randomData(depth: number): unknown {
  if (depth <= 0 || rand() < 0.2) return pick([1, 'a', 'aaaa', true, null, 2.5]);
  return rand() < 0.5 ? { a: randomData(depth - 1), b: randomData(depth - 1) } : [randomData(depth - 1), randomData(depth - 1)];
}
