// Contract-driven fuzzing of /api/v1: malformed paths, queries, bodies, methods and credentials are
// generated from openapi/openapi.yaml for every operation, with date-times at and past the edges of the
// supported range, request lines over the server's limit, and tenant-supplied input schemas. Every answer must carry `Cache-Control: no-store`;
// never be a 5xx (but 501 for operations not built yet), a stack trace or an echo of huge input; and every
// error must be exactly `{ error: { code, message } }`.
// Failures are collected, grouped by kind and reported together, so one run shows everything broken.
import { Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import request, { type Response } from 'supertest';
import { createHttpServer } from '../../src/http/server';
import { isUsableDateTime } from '../../src/lib/instants';
import { BASE_URL, startTestApp, type TestApp } from '../support/app';
import { accessToken, createOwner, sessionCookie } from '../support/identity';

jest.setTimeout(180_000);

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const MAX_MESSAGE = 1_000;
const HUGE_NAME = 'k'.repeat(100 * 1024);
// At and past the edges of the supported range (1970-01-01 to 9999-12-31), and instants a Date cannot hold.
const DATE_TIMES = [
  '0000-01-01T00:00:00Z', '1969-12-31T23:59:59Z', '1970-01-01T00:00:00Z', '1970-01-03T00:00:00Z', '9999-12-31T23:59:59Z',
  '9999-12-31T23:59:59.999-01:00', '+275760-09-13T00:00:00Z', '2016-12-31T23:59:60Z', '2024-02-30T00:00:00Z', '2024-06-01T25:00:00Z',
];

// Deterministic PRNG (mulberry32): the same seed always yields the same cases.
function mulberry32(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = mulberry32(0xf10e5);
const pick = <T>(items: T[]): T => items[Math.floor(rand() * items.length)];
const junk = (n: number) => Array.from({ length: n }, () => pick(['a', 'Z', '0', '-', '.', '~', ' ', '/', '?', '#', '%', '&', 'é', '中', '😀', '\u202e', "'", '"', '<', '\\'])).join('');

/** One operation of the contract, with what the generators need. */
interface Op {
  id: string; method: string; template: string; pattern: RegExp; scope: string | null;
  pathParams: { name: string; example: string }[]; query: { name: string; schema: any }[]; body?: { schema: any; example: any };
  /** A handler is registered (else 501 not_implemented is expected), and the contract documents 501. */
  implemented: boolean; documents501: boolean;
  /** Operations of the interface specification document no 413: an oversized body is a 400 there. */
  documents413: boolean;
}
/** One request. `invalid`: the contract refuses it, so no 2xx or 501. `preAuth`: refused before credentials are read. */
interface Case {
  op: Op; gen: string; method: string; url: string; headers?: Record<string, string>; body?: string | Buffer;
  invalid?: boolean; preAuth?: boolean; expect?: (res: Response) => string | null;
}
interface Failure { kind: string; method: string; url: string; status: number; excerpt: string }

let app: TestApp, server: Server, base: string, ops: Op[], cases: Case[];
let creds: Record<'all' | 'none' | 'cookie', Record<string, string>>;
let sent = 0;
const keepAlive = new Agent({ keepAlive: true });

// Ajv mirrors the server: bodies are not coerced, query parameters are.
const ajv = addFormats(new Ajv2020({ strict: false }));
const ajvQuery = addFormats(new Ajv2020({ strict: false, coerceTypes: true }));
const queryValidators = new Map<any, (value: unknown) => boolean>();
function isValidQuery(schema: any, value: string | string[]): boolean {
  if (!queryValidators.has(schema)) queryValidators.set(schema, ajvQuery.compile({ type: 'object', properties: { v: schema } }) as any);
  return queryValidators.get(schema)!({ v: value });
}

function operationsOf(app: TestApp): Op[] {
  const definition = app.api.backend.definition as any;
  const handlers = app.api.backend.handlers as Record<string, unknown>;
  return Object.entries(definition.paths).flatMap(([template, item]: [string, any]) =>
    METHODS.filter((m) => item[m]).map((m) => {
      const op = item[m];
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])];
      const media = op.requestBody?.content?.['application/json'];
      return {
        id: op.operationId, method: m.toUpperCase(), template, pattern: new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}/*$`),
        pathParams: params.filter((p) => p.in === 'path').map((p) => ({ name: p.name, example: String(p.example ?? 'x_1') })),
        query: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema })),
        body: media ? { schema: media.schema, example: media.example ?? media.schema.example } : undefined,
        scope: Object.values(op.security?.[0] ?? {}).flat()[0] as string | null ?? null,
        implemented: typeof handlers[op.operationId] === 'function',
        documents501: Boolean(op.responses['501']),
        documents413: Boolean(op.responses['413']),
      };
    }),
  );
}

const urlOf = (op: Op, values: Record<string, string> = {}, query = '') =>
  op.template.replace(/\{(\w+)\}/g, (_, name) => values[name] ?? op.pathParams.find((p) => p.name === name)!.example) + query;
const json = (value: unknown) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) });
const nest = (depth: number): unknown => Array.from({ length: depth }).reduce((value) => ({ a: value }), 'leaf');

// [segment, generator label, contract-invalid?]: the segments are sent as they are written here.
const PATH_VALUES: [string, string, boolean][] = [
  ['%zz', 'path %zz', true], ['%', 'path %', true], ['%E0%A4%A', 'path truncated UTF-8', true], ['%C0%AF', 'path overlong UTF-8', true],
  ['x'.repeat(10 * 1024), 'path 10 KB id', true], [encodeURIComponent('ünïcødé-中文-😀'), 'path unicode', false], ['..', 'path ..', false],
  ['%2e%2e', 'path encoded ..', false], ['a%2Fb', 'path encoded slash', false], ['%00', 'path NUL', true], ['', 'path empty segment', false],
];

function generate(ops: Op[]): Case[] {
  const out: Case[] = [];
  for (const op of ops) {
    const base = op.body ? json(op.body.example) : {};
    out.push({ op, gen: 'baseline', method: op.method, url: urlOf(op), ...base });
    for (const p of op.pathParams) {
      // Over Node's 16 KB limit for the request line and headers: refused before routing, in the error shape.
      out.push({ op, gen: 'path 20 KB id', method: op.method, url: urlOf(op, { [p.name]: 'x'.repeat(20 * 1024) }), invalid: true, preAuth: true, expect: (res) => (res.status === 431 && res.body?.error?.code === 'headers_too_large' ? null : 'expected 431 headers_too_large') });
      for (const [value, gen, invalid] of PATH_VALUES) out.push({ op, gen, method: op.method, url: urlOf(op, { [p.name]: value }), invalid, preAuth: value.includes('%') && invalid, ...base });
      out.push({ op, gen: 'path random junk', method: op.method, url: urlOf(op, { [p.name]: encodeURIComponent(junk(12)) }), ...base });
    }
    // Query strings: wrong types for each documented parameter (validity as the server coerces), unknown
    // parameters, broken percent-encoding.
    const huge = 'q'.repeat(8 * 1024);
    const queryCases: [string, string, boolean][] = [['zz=1', 'query unknown param', true], ['%zz=1', 'query malformed encoding (name)', true], [`${huge}=1`, 'query 8 KB name', true]];
    if (op.query.length) queryCases.push(['=&&=', 'query empty pairs', false]);
    for (const q of op.query) {
      for (const v of ['abc', '-1', '1.5', '1e309', '99999999999999999999', 'true', 'bogus-value', '', huge]) {
        queryCases.push([`${q.name}=${v}`, `query ${q.name}=${v.length > 20 ? '<8 KB>' : v}`, !isValidQuery(q.schema, v)]);
      }
      queryCases.push(
        [`${q.name}=%zz`, `query ${q.name}=%zz`, false], [`${q.name}=%E0%A4%A`, `query ${q.name} truncated UTF-8`, false], [`${q.name}=%`, `query ${q.name}=%`, false],
        [`${q.name}=1&${q.name}=2`, `query ${q.name} repeated`, !isValidQuery(q.schema, ['1', '2'])],
        [`${q.name}[]=1`, `query ${q.name}[]`, true],
      );
    }
    if (op.query.some((q) => q.name === 'cursor')) {
      for (const raw of ['null', '{"__proto__":{"x":1}}', '\u0000garbage']) queryCases.push([`cursor=${Buffer.from(raw).toString('base64url')}`, 'query forged cursor', false]);
    }
    for (const [query, gen, invalid] of queryCases) out.push({ op, gen, method: op.method, url: urlOf(op, {}, `?${query}`), invalid, ...base });
    if (op.body) out.push(...bodyCases(op, op.body));
    // Bodies where the operation takes none: ignored or refused, never a crash.
    else if (op.method !== 'GET') {
      out.push({ op, gen: 'unexpected body', method: op.method, url: urlOf(op), ...json({ x: 1 }) });
      out.push({ op, gen: 'unexpected broken JSON', method: op.method, url: urlOf(op), headers: { 'content-type': 'application/json' }, body: '{"', preAuth: true });
    }
  }
  return out;
}

function bodyCases(op: Op, { schema, example }: { schema: any; example: any }): Case[] {
  const url = urlOf(op);
  const mk = (gen: string, value: unknown): Case => ({ op, gen, method: op.method, url, ...json(value), invalid: !ajv.validate(schema, value) });
  const raw = (gen: string, contentType: string | undefined, body: string, expectStatus?: number): Case => ({
    op, gen, method: op.method, url, headers: contentType ? { 'content-type': contentType } : {}, body: Buffer.from(body), invalid: true, preAuth: true,
    expect: expectStatus ? (res) => (res.status === expectStatus ? null : `expected ${expectStatus}`) : undefined,
  });
  const out: Case[] = [
    raw('body not JSON', 'application/json', '{"name": "x",', 400), raw('body not JSON', 'application/json', 'not json at all', 400), raw('body not JSON', 'application/json', "{'single': 1}", 400),
    ...['[]', '42', '"a string"', 'null', 'true'].map((b) => mk(`body top-level ${b}`, JSON.parse(b))),
    mk('body JSON string holding the JSON object', JSON.stringify(example)), // a string, whatever it spells
    mk('body unknown property', { ...example, zzUnknown: 1 }),
    mk('body 100 KB property name', { ...example, [HUGE_NAME]: 1 }),
    mk('body __proto__ property', JSON.parse(`{"__proto__": {"admin": true}, ${JSON.stringify(example).slice(1)}`)),
    { ...mk('body nested depth 100', nest(100)), preAuth: true },
    { ...mk('body property nested depth 100', { ...example, [Object.keys(schema.properties)[0]]: nest(100) }), preAuth: true },
    raw('body over 1 MB', 'application/json', JSON.stringify({ ...example, pad: 'x'.repeat(1_100_000) }), op.documents413 ? 413 : 400),
    raw('content-type text/plain', 'text/plain', JSON.stringify(example), 415),
    raw('content-type form-urlencoded', 'application/x-www-form-urlencoded', 'name=x&format=github', 415),
    raw('content-type multipart', 'multipart/form-data; boundary=XyZ', '--XyZ\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n--XyZ--\r\n', 415),
    raw('content-type missing', undefined, JSON.stringify(example), 415),
    raw('charset=latin1', 'application/json; charset=latin1', JSON.stringify(example), 415),
    { ...raw('empty body, JSON type', 'application/json', ''), preAuth: false },
  ];
  for (const name of schema.required ?? []) out.push(mk('body required property missing', { ...example, [name]: undefined }));
  for (const [name, prop] of Object.entries<any>(schema.properties ?? {})) {
    const wrong: unknown[] = [12345, -1, 1.5, 1e300, true, null, {}, [], ['x'], 'x', ''];
    for (let i = 0; i < 2; i++) out.push(mk('body property wrong type', { ...example, [name]: pick(wrong) }));
    if (prop.type === 'string') out.push(mk('body very long string', { ...example, [name]: 'y'.repeat(100_000) }));
    if (prop.format === 'date-time') {
      for (const at of DATE_TIMES) out.push({ ...mk(`body date-time ${at}`, { ...example, [name]: at }), invalid: !isUsableDateTime(at) || !ajv.validate(schema, { ...example, [name]: at }) });
    }
    if (prop.type === 'array') out.push(mk('body array item of the wrong type', { ...example, [name]: [42] }), mk('body array of very long strings', { ...example, [name]: ['y'.repeat(100_000)] }));
  }
  return out;
}

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

/** The operation the router picks (as openapi-backend does: by template, the most specific first), if any. */
function routeOf(c: Case): Op | undefined {
  const path = c.url.split('?')[0];
  const specificity = (op: Op) => op.template.replace(/\{\w+\}/g, '').length;
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
  const notBuilt = res.status === 501 && (code === 'not_implemented' || c.method === 'HEAD') && op && !op.implemented && op.documents501;
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
  }
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
  sent++;
  return test.ok(() => true);
}

/** Sends every case (8 at a time), runs the checks plus `also`, and fails with a grouped summary. */
async function fuzz(list: Case[], extra: Record<string, string>, also?: (c: Case, res: Response) => string | null) {
  const failures: Failure[] = [];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < list.length; i = next++) {
      const c = list[i];
      const res = await send(c, extra);
      const problems = problemsOf(c, res);
      const kinds = problems.map((p) => (p.startsWith('no Cache') ? p : `${p} ← ${c.gen}`));
      // The rule of a whole block is one kind, whatever the generator.
      const more = also?.(c, res);
      if (more) kinds.push(more);
      const url = c.url.length > 90 ? `${c.url.slice(0, 70)}…(${c.url.length} chars)` : c.url;
      for (const kind of kinds) failures.push({ kind, method: c.method, url, status: res.status, excerpt: (res.text ?? '').slice(0, 160) });
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
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

beforeAll(async () => {
  const unlimited = { points: 1_000_000, durationSeconds: 60 };
  app = await startTestApp({}, { policies: { api: unlimited, apiIp: unlimited } });
  server = createHttpServer(app.app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const owner = await createOwner(app.database.db);
  creds = {
    all: { authorization: `Bearer ${await accessToken(app, owner)}` },
    none: { authorization: `Bearer ${await accessToken(app, owner, { scopes: [] })}` },
    cookie: { cookie: await sessionCookie(app, owner) },
  };
  ops = operationsOf(app);
  cases = generate(ops);
});
afterAll(async () => {
  keepAlive.destroy();
  await new Promise((resolve) => server.close(resolve));
  await app.close();
  console.log(`fuzz.test.ts sent ${sent} requests for ${ops.length} operations`);
});

const notSuccess = (_c: Case, res: Response) => (res.status < 300 ? `${res.status} success` : null);

describe('contract fuzzing of /api/v1', () => {
  it('without credentials: never a success, never a crash', () => fuzz(cases, {}, notSuccess));

  it('with a bearer token holding every scope', () => fuzz(cases, creds.all));

  it('with a bearer token holding no scope: only scope-free operations succeed', () =>
    fuzz(cases, creds.none, (c, res) => (routeOf(c)?.scope ? notSuccess(c, res) : null)));

  it('with an owner session from the same origin', () => fuzz(cases, { ...creds.cookie, origin: BASE_URL }));

  it('with an owner session on unsafe methods without Origin or Sec-Fetch-Site: 403 cross_site_request', () =>
    fuzz(cases.filter((c) => UNSAFE.has(c.method)), creds.cookie, (c, res) => {
      // The request line is read (431), the path decoded and routed, and the body read (415, 413, invalid JSON,
      // nesting), before credentials.
      if (!routeOf(c) || (c.preAuth && [400, 413, 415, 431].includes(res.status))) return null;
      return res.status === 403 && res.body?.error?.code === 'cross_site_request' ? null : `expected 403 cross_site_request, got ${res.status} ${res.body?.error?.code ?? ''}`;
    }));

  it('answers HEAD like GET, and undocumented methods with 405 and Allow', async () => {
    const list: Case[] = [];
    const documented = new Map<string, string[]>();
    for (const op of ops) documented.set(op.template, [...(documented.get(op.template) ?? []), op.method]);
    // HEAD must answer with GET's status (Express serves HEAD from GET routes; there is no body to compare).
    for (const op of ops.filter((o) => o.method === 'GET')) {
      const get = await send({ op, gen: 'GET', method: 'GET', url: urlOf(op) }, creds.all);
      list.push({ op, gen: 'HEAD like GET', method: 'HEAD', url: urlOf(op), expect: (res) => (res.status === get.status ? null : `expected GET's ${get.status}`) });
    }
    for (const [template, allowed] of documented) {
      const op = ops.find((o) => o.template === template)!;
      for (const method of METHODS.map((m) => m.toUpperCase()).filter((m) => !allowed.includes(m))) {
        // Allow lists the documented methods, and HEAD may join GET (RFC 9110 section 9.3.2).
        const allowOk = (allow = '') => allow.split(/,\s*/).filter((m) => !(m === 'HEAD' && allowed.includes('GET'))).sort().join() === [...allowed].sort().join();
        const check = (res: Response) => (res.status === 405 && res.body?.error?.code === 'method_not_allowed' && allowOk(res.headers.allow)
          ? null : `expected 405 method_not_allowed with Allow: ${allowed.join(', ')} (got Allow: ${res.headers.allow ?? 'none'})`);
        list.push({ op, gen: 'undocumented method', method, url: urlOf(op), ...json({}), expect: check });
      }
    }
    await fuzz(list, creds.all);
  });

  it('backtests a real job over every window made of date-times at and past the edges of the range', async () => {
    const source = await send({ op: ops.find((op) => op.id === 'createWebhookSource')!, gen: 'source', method: 'POST', url: '/api/v1/webhook-sources', ...json({ name: 'Fuzz', format: 'github' }) }, creds.all);
    const triggers = [{ type: 'webhook', sourceId: source.body.id, events: ['*'] }];
    const job = await send({ op: ops.find((op) => op.id === 'createJob')!, gen: 'job', method: 'POST', url: '/api/v1/jobs', ...json({ name: 'Backtested', promptTemplate: 'x', triggers }) }, creds.all);
    expect([source.status, job.status]).toEqual([201, 201]);
    const backtest = ops.find((op) => op.id === 'backtestJob')!;
    const list: Case[] = [];
    for (const since of [undefined, ...DATE_TIMES]) {
      for (const until of [undefined, ...DATE_TIMES]) {
        list.push({
          op: backtest, gen: `backtest since ${since ?? '-'} until ${until ?? '-'}`, method: 'POST', url: `/api/v1/jobs/${job.body.id}/backtest`, ...json({ since, until }),
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
      const job = await check({ op: createJob, gen: 'generated input schema', method: 'POST', url: '/api/v1/jobs', ...json({ name: `Schema ${i}`, promptTemplate: 'x', triggers: [{ type: 'invocation', inputSchema }] }) }, [201, 400]);
      if (job.status === 400) {
        if (!['invalid_input_schema', 'validation_failed'].includes(job.body?.error?.code)) failures.push({ kind: `refused with ${job.body?.error?.code}`, method: 'POST', url: '/api/v1/jobs', status: 400, excerpt: JSON.stringify(inputSchema).slice(0, 200) });
        continue;
      }
      saved++;
      for (let j = 0; j < 4; j++) {
        await check({ op: invokeJob, gen: 'data for a generated input schema', method: 'POST', url: `/api/v1/jobs/${job.body.id}/invocations`, ...json({ data: { a: randomData(10), b: randomData(3) } }) }, [202, 400]);
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
    ];
    const list = ops.flatMap((op) => headers.map(([authorization, label]): Case => ({
      op, gen: `Authorization: ${label}`, method: op.method, url: urlOf(op), ...(op.body ? json(op.body.example) : {}),
      headers: { ...(op.body ? { 'content-type': 'application/json' } : {}), authorization },
      expect: (res) => (res.status === 401 && res.body?.error?.code === 'invalid_token' ? null : 'expected 401 invalid_token'),
    })));
    return fuzz(list, {});
  });
});
