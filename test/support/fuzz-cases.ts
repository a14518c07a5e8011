// The requests of the contract fuzz (test/api/fuzz.test.ts), generated from each operation of the contract:
// valid ones on real resources, and mutated, wrong-typed, huge, deep, Unicode-edged and wrongly typed (media)
// ones around them. Deterministic: one seeded PRNG draws every random choice.
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Response } from 'supertest';
import { isUsableDateTime } from '../../src/lib/instants';
import { urlOf, withIds, type Operation } from './contract-operations';
import { ENCODINGS, RAW_PERCENT, RAW_UTF8, UNICODE, gzipBomb, isUnstorable, nestObjects, nestedArraysText, percentEncode } from './hostile-input';

export type Kind = 'valid' | 'mutated' | 'wrong type' | 'huge' | 'deep' | 'unicode' | 'media type' | 'path' | 'query' | 'date-time' | 'method' | 'credentials' | 'input schema';

/** One request. `invalid`: the contract refuses it, so no 2xx or 501. `preAuth`: refused before credentials are read. */
export interface Case {
  op: Operation;
  kind: Kind;
  gen: string;
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  invalid?: boolean;
  preAuth?: boolean;
  expect?: (res: Response) => string | null;
  /** The resources and names a valid request uses up, made just before it is sent with credentials that may change things. */
  build?: () => Promise<Partial<Case>>;
}

/** Where the generated requests point. */
export interface Targets {
  /** Real ids for `op`'s path parameters: the operation's own resource where it changes it, or shared ones. */
  idsOf(op: Operation): Record<string, string>;
  /** New resources for a valid request that changes or ends its resource. */
  freshIds(op: Operation): Promise<Record<string, string>>;
  /** Example ids of the contract mapped to real ones, for bodies and queries. */
  map: Map<string, string>;
}

export const BODY_LIMIT = 1024 * 1024;
export const MAX_DEPTH = 32;
// At and past the edges of the supported range (1970-01-01 to 9999-12-31), and instants a Date cannot hold.
export const DATE_TIMES = [
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
export const rand = mulberry32(0xf10e5);
export const pick = <T>(items: T[]): T => items[Math.floor(rand() * items.length)];
const junk = (n: number) => Array.from({ length: n }, () => pick(['a', 'Z', '0', '-', '.', '~', ' ', '/', '?', '#', '%', '&', 'é', '中', '😀', '\u202e', "'", '"', '<', '\\'])).join('');

// Ajv mirrors the server: bodies are not coerced, query parameters are.
export const ajv = addFormats(new Ajv2020({ strict: false }));
ajv.addFormat('date-time', { type: 'string', validate: isUsableDateTime });
const ajvQuery = addFormats(new Ajv2020({ strict: false, coerceTypes: true }));
const queryValidators = new Map<any, (value: unknown) => boolean>();
function isValidQuery(schema: any, value: string | string[]): boolean {
  if (!queryValidators.has(schema)) queryValidators.set(schema, ajvQuery.compile({ type: 'object', properties: { v: schema } }) as any);
  return queryValidators.get(schema)!({ v: value }) && !String(value).includes('\u0000');
}
/** Every key and string of a JSON value, run together. */
const textOf = (value: unknown): string =>
  typeof value === 'string' ? value : value && typeof value === 'object' ? Object.entries(value).map(([k, v]) => k + textOf(v)).join('') : '';
const isValidBody = (schema: any, value: unknown) => ajv.validate(schema, value) && !isUnstorable(textOf(value));

const json = (value: unknown) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) });
const expectCode = (status: number | number[], code: string) => (res: Response) =>
  [status].flat().includes(res.status) && res.body?.error?.code === code ? null : `expected ${[status].flat().join(' or ')} ${code}`;

// Fields a tenant holds once (a job's slug, a secret's name) or that make a request a repeat (idempotency key).
const UNIQUE_FIELDS = ['name', 'slug', 'idempotencyKey'];
let serial = 0;
/** `value` with a number added to its unique fields, where the schema still takes the result. */
function unique(value: any, schema: any): any {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const n = ++serial;
  const out = { ...value };
  for (const field of UNIQUE_FIELDS.filter((f) => typeof out[f] === 'string')) {
    const suffixed = [`${out[field]}_${n}`, `${out[field]} ${n}`].find((v) => ajv.validate(schema, { ...out, [field]: v }));
    if (suffixed) out[field] = suffixed;
  }
  return out;
}

// [segment, generator label, kind, contract-invalid?]: the segments are sent as they are written here.
const PATH_VALUES: [string, string, Kind, boolean][] = [
  ['%zz', 'path %zz', 'path', true], ['%', 'path %', 'path', true], ['%E0%A4%A', 'path truncated UTF-8', 'unicode', true], ['%C0%AF', 'path overlong UTF-8', 'unicode', true],
  ['x'.repeat(10 * 1024), 'path 10 KB id', 'huge', true], [encodeURIComponent('ünïcødé-中文-😀'), 'path unicode', 'unicode', false], ['..', 'path ..', 'path', false],
  ['%2e%2e', 'path encoded ..', 'path', false], ['a%2Fb', 'path encoded slash', 'path', false], ['%00', 'path NUL', 'path', true], ['', 'path empty segment', 'path', false],
];

function pathCases(op: Operation, ids: Record<string, string>, base: Partial<Case>): Case[] {
  const out: Case[] = [];
  for (const p of op.pathParams) {
    const at = (value: string) => urlOf(op, { ...ids, [p.name]: value });
    // Over Node's 16 KB limit for the request line and headers: refused before routing, in the error shape.
    out.push({ op, kind: 'huge', gen: 'path 20 KB id', method: op.method, url: at('x'.repeat(20 * 1024)), invalid: true, preAuth: true, expect: expectCode(431, 'headers_too_large') });
    for (const [value, gen, kind, invalid] of PATH_VALUES) out.push({ op, kind, gen, method: op.method, url: at(value), invalid, preAuth: value.includes('%') && invalid, ...base });
    out.push({ op, kind: 'path', gen: 'path random junk', method: op.method, url: at(encodeURIComponent(junk(12))), ...base });
  }
  // A path that does not decode to text (a NUL, an unpaired surrogate, bytes that are not UTF-8) is 400 invalid_path;
  // every such value, and a few of the others, each in one of the path parameters in turn.
  const short = UNICODE.filter(([, text]) => text.length < 1000);
  const refused = short.filter(([, text]) => /\u0000|\p{Cs}/u.test(text));
  const values: [string, string, boolean][] = [
    ...refused.map(([label, text]): [string, string, boolean] => [`path ${label}`, percentEncode(text), true]),
    ...RAW_PERCENT.map((raw): [string, string, boolean] => ['path bytes that are not UTF-8', raw, true]),
    ...Array.from({ length: 4 }, (): [string, string, boolean] => {
      const [label, text] = pick(short.filter((sample) => !refused.includes(sample)));
      return [`path ${label}`, percentEncode(text), false];
    }),
  ];
  values.forEach(([gen, value, invalid], i) => {
    if (!op.pathParams.length) return;
    const url = urlOf(op, { ...ids, [op.pathParams[i % op.pathParams.length].name]: value });
    out.push({ op, kind: 'unicode', gen, method: op.method, url, invalid, preAuth: invalid, expect: invalid ? expectCode(400, 'invalid_path') : undefined, ...base });
  });
  return out;
}

interface QueryCase {
  query: string;
  gen: string;
  kind: Kind;
  invalid?: boolean;
  preAuth?: boolean;
  expect?: Case['expect'];
}

function queryCases(op: Operation, map: Map<string, string>): QueryCase[] {
  const huge = 'q'.repeat(8 * 1024);
  const q_ = (query: string, gen: string, kind: Kind, invalid?: boolean): QueryCase => ({ query, gen, kind, invalid });
  // A NUL is refused before anything else reads the query; the contract says nothing of bytes that do not decode.
  const nul = (query: string, gen: string): QueryCase => ({ query, gen, kind: 'unicode', invalid: true, preAuth: true, expect: expectCode(400, 'validation_failed') });
  const out: QueryCase[] = [
    q_('zz=1', 'query unknown param', 'query', true), q_('%zz=1', 'query malformed encoding (name)', 'query', true), q_(`${huge}=1`, 'query 8 KB name', 'huge', true),
    q_(`${'a[b]'.repeat(200)}=1`, 'query 200 nested brackets', 'deep', true),
  ];
  if (op.query.length) out.push(q_('=&&=', 'query empty pairs', 'query', false));
  for (const q of op.query) {
    for (const v of ['abc', '-1', '1.5', '1e309', '99999999999999999999', 'true', 'bogus-value', '', huge]) {
      out.push(q_(`${q.name}=${v}`, `query ${q.name}=${v.length > 20 ? '<8 KB>' : v}`, v === huge ? 'huge' : 'wrong type', !isValidQuery(q.schema, v)));
    }
    out.push(
      q_(`${q.name}=%zz`, `query ${q.name}=%zz`, 'query', false), q_(`${q.name}=%E0%A4%A`, `query ${q.name} truncated UTF-8`, 'unicode', false), q_(`${q.name}=%`, `query ${q.name}=%`, 'query', false),
      q_(`${q.name}=1&${q.name}=2`, `query ${q.name} repeated`, 'query', !isValidQuery(q.schema, ['1', '2'])),
      q_(Array(1000).fill(`${q.name}=1`).join('&'), `query ${q.name} repeated 1,000 times`, 'huge', !isValidQuery(q.schema, Array(1000).fill('1'))),
      q_(`${q.name}[]=1`, `query ${q.name}[]`, 'query', true), q_(`${q.name}[a][b][c][d]=1`, `query ${q.name} nested`, 'deep', true),
      nul(`${q.name}=a%00b`, 'query NUL'),
    );
  }
  // Each Unicode sample once, in each of the query parameters in turn.
  UNICODE.forEach(([label, text], i) => {
    const q = op.query[i % op.query.length];
    if (!q) return;
    if (text.includes('\u0000')) out.push(nul(`${q.name}=${percentEncode(text)}`, `query ${label}`));
    // An unpaired surrogate sent as its three bytes does not decode: the value stays as sent.
    else out.push(q_(`${q.name}=${percentEncode(text)}`, `query ${label}`, 'unicode', isUnstorable(text) ? undefined : !isValidQuery(q.schema, text)));
  });
  RAW_PERCENT.forEach((raw, i) => op.query.length && out.push(q_(`${op.query[i % op.query.length].name}=${raw}`, 'query bytes that are not UTF-8', 'unicode')));
  if (op.query.some((q) => q.name === 'cursor')) {
    for (const raw of ['null', '{"__proto__":{"x":1}}', '\u0000garbage']) out.push(q_(`cursor=${Buffer.from(raw).toString('base64url')}`, 'query forged cursor', 'query', false));
  }
  // Every documented parameter at its example: a valid filter over real resources (cursors only come from a Link).
  const examples = op.query.filter((q) => q.name !== 'cursor').map((q) => `${q.name}=${encodeURIComponent(map.get(q.example) ?? q.example)}`);
  if (examples.length) out.push(q_(examples.join('&'), 'query examples', 'valid', false));
  return out;
}

/** Every request generated for the operations, pointing at `targets`. */
export function generate(ops: Operation[], targets: Targets): Case[] {
  const out: Case[] = [];
  for (const op of ops) {
    const ids = targets.idsOf(op);
    const validBody = () => (op.body ? unique(withIds(op.body.example, targets.map), op.body.schema) : undefined);
    const withBody = (value = validBody()) => (op.body ? json(value) : {});
    out.push({
      op, kind: 'valid', gen: 'valid', method: op.method, url: urlOf(op, ids), ...withBody(),
      build: async () => ({ url: urlOf(op, { ...ids, ...(await targets.freshIds(op)) }), ...withBody() }),
    });
    out.push(...pathCases(op, ids, withBody()));
    for (const { query, ...rest } of queryCases(op, targets.map)) out.push({ op, method: op.method, url: urlOf(op, ids, `?${query}`), ...withBody(), ...rest });
    if (op.body) out.push(...bodyCases(op, urlOf(op, ids), validBody));
    // Bodies where the operation takes none: ignored or refused, never a crash.
    else if (op.method !== 'GET') {
      out.push({ op, kind: 'mutated', gen: 'unexpected body', method: op.method, url: urlOf(op, ids), ...json({ x: 1 }) });
      out.push({ op, kind: 'mutated', gen: 'unexpected broken JSON', method: op.method, url: urlOf(op, ids), headers: { 'content-type': 'application/json' }, body: '{"', preAuth: true });
      for (const [contentType, body] of [['text/plain', 'x'], ['application/x-www-form-urlencoded', 'a=1'], ['multipart/form-data; boundary=XyZ', '--XyZ--\r\n']]) {
        out.push({ op, kind: 'media type', gen: `unexpected body as ${contentType.split(';')[0]}`, method: op.method, url: urlOf(op, ids), headers: { 'content-type': contentType }, body, preAuth: true });
      }
    }
  }
  return out;
}

function bodyCases(op: Operation, url: string, validBody: () => any): Case[] {
  const { schema } = op.body!;
  // Text no database stores is refused as the body is read, before credentials.
  const mk = (kind: Kind, gen: string, value: unknown, extra: Partial<Case> = {}): Case =>
    ({ op, kind, gen, method: op.method, url, ...json(value), invalid: !isValidBody(schema, value), ...(isUnstorable(textOf(value)) ? { preAuth: true } : {}), ...extra });
  const raw = (kind: Kind, gen: string, headers: Record<string, string>, body: string | Buffer, expect?: Case['expect'], extra: Partial<Case> = {}): Case => ({
    op, kind, gen, method: op.method, url, headers, body: Buffer.from(body), invalid: true, preAuth: true, expect, ...extra,
  });
  const jsonType = { 'content-type': 'application/json' };
  const tooLarge = expectCode(op.responses['413'] ? 413 : 400, 'payload_too_large');
  const tooDeep = expectCode(400, 'invalid_json');
  const notTooDeep = (res: Response) => (res.body?.error?.code === 'invalid_json' ? 'refused at the nesting limit' : null);
  const base = validBody();
  const props = Object.entries<any>(schema.properties ?? {});
  const firstProp = props[0]?.[0];
  // JSON of exactly `size` bytes: the valid body padded by an unknown property.
  const sized = (size: number) => {
    const text = JSON.stringify({ ...base, pad: '' });
    return `${text.slice(0, -2)}${'x'.repeat(size - Buffer.byteLength(text))}"}`;
  };
  const out: Case[] = [
    ...['{"name": "x",', 'not json at all', "{'single': 1}"].map((b) => raw('mutated', 'body not JSON', jsonType, b, expectCode(400, 'invalid_json'))),
    ...['[]', '42', '"a string"', 'null', 'true'].map((b) => mk('wrong type', `body top-level ${b}`, JSON.parse(b))),
    mk('wrong type', 'body JSON string holding the JSON object', JSON.stringify(base)), // a string, whatever it spells
    mk('mutated', 'body unknown property', { ...base, zzUnknown: 1 }),
    mk('mutated', 'body __proto__ property', JSON.parse(`{"__proto__": {"admin": true}, ${JSON.stringify(base).slice(1)}`)),
    mk('mutated', 'body constructor.prototype property', { ...base, constructor: { prototype: { admin: true } } }),
    // (An operation whose body is optional takes an empty one.)
    ...(op.body!.required ? [{ ...raw('mutated', 'empty body, JSON type', jsonType, ''), preAuth: false }] : []),
    // Huge: names and values far past any limit, the size limit itself (exactly at it, one byte over), a body
    // that only inflates past it, and containers with very many members.
    mk('huge', 'body 100 KB property name', { ...base, ['k'.repeat(100 * 1024)]: 1 }),
    raw('huge', 'body over 1 MB', jsonType, JSON.stringify({ ...base, pad: 'x'.repeat(1_100_000) }), tooLarge),
    raw('huge', 'body of exactly the size limit', jsonType, sized(BODY_LIMIT), (res) => (res.body?.error?.code === 'payload_too_large' ? 'a body at the limit refused as too large' : null), {
      preAuth: false, invalid: !isValidBody(schema, JSON.parse(sized(BODY_LIMIT))),
    }),
    raw('huge', 'body one byte over the size limit', jsonType, sized(BODY_LIMIT + 1), tooLarge),
    raw('huge', 'gzip body inflating to 20 MB', { ...jsonType, 'content-encoding': 'gzip' }, gzipBomb(), tooLarge),
    mk('huge', 'body array of 100,000 numbers', Array(100_000).fill(1)),
    mk('huge', 'body object of 20,000 properties', Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`p${i}`, i]))),
    // Deep: at the nesting limit, one past it, and far past it (objects and arrays), at the top and in a property.
    mk('deep', `body nested depth ${MAX_DEPTH}`, nestObjects(MAX_DEPTH), { expect: notTooDeep }),
    mk('deep', `body nested depth ${MAX_DEPTH + 1}`, nestObjects(MAX_DEPTH + 1), { preAuth: true, expect: tooDeep }),
    mk('deep', 'body nested depth 100', nestObjects(100), { preAuth: true, expect: tooDeep }),
    raw('deep', 'body arrays nested 10,000 deep', jsonType, nestedArraysText(10_000), tooDeep),
    raw('deep', 'body arrays nested 100,000 deep', jsonType, nestedArraysText(100_000), tooDeep),
  ];
  if (firstProp) out.push(mk('deep', `body property nested depth ${MAX_DEPTH}`, { ...base, [firstProp]: nestObjects(MAX_DEPTH) }, { preAuth: true, expect: tooDeep }));
  // Free-form objects (invocation data, a context, conditions) take any JSON: right at the limit it reaches the handler.
  for (const [name] of props.filter(([, p]) => p.type === 'object' && !p.properties)) {
    out.push(mk('deep', `body ${name} nested to the limit`, { ...base, [name]: nestObjects(MAX_DEPTH - 1) }, { expect: notTooDeep }));
    out.push(mk('unicode', `body ${name} with Unicode keys and values`, { ...base, [name]: Object.fromEntries(UNICODE.map(([label, text]) => [text.slice(0, 50), label])) }));
  }
  for (const name of schema.required ?? []) out.push(mk('mutated', 'body required property missing', { ...base, [name]: undefined }));
  for (const [name, prop] of props) {
    const wrong: unknown[] = [12345, -1, 1.5, 1e300, -0, 9007199254740993, true, null, {}, [], ['x'], 'x', ''];
    for (let i = 0; i < 2; i++) out.push(mk('wrong type', 'body property wrong type', { ...base, [name]: pick(wrong) }));
    if (prop.type === 'string') out.push(mk('huge', 'body very long string', { ...base, [name]: 'y'.repeat(100_000) }));
    if (prop.format === 'date-time') {
      for (const at of DATE_TIMES) out.push(mk('date-time', `body date-time ${at}`, { ...base, [name]: at }));
    }
    if (prop.type === 'array') {
      out.push(mk('wrong type', 'body array item of the wrong type', { ...base, [name]: [42] }), mk('huge', 'body array of very long strings', { ...base, [name]: ['y'.repeat(100_000)] }));
      const item = Array.isArray(base[name]) && base[name].length ? base[name][0] : 'x';
      out.push(mk('huge', 'body array of 10,000 items', { ...base, [name]: Array(10_000).fill(typeof item === 'object' ? {} : item) }));
    }
  }
  // Each Unicode sample once, and each run of bytes that are not UTF-8 (read as replacement characters), in each
  // of the string properties in turn.
  const strings = props.filter(([, p]) => p.type === 'string').map(([name]) => name);
  UNICODE.forEach(([label, text], i) => {
    // Each value its own: one given in a token field is a secret to the scan (test/support/secret-scan.ts), and
    // must not be the value of another request's name.
    if (strings.length) out.push(mk('unicode', `body string ${label}`, { ...base, [strings[i % strings.length]]: `${text} #${++serial}` }, isUnstorable(text) ? { expect: expectCode(400, 'validation_failed') } : {}));
  });
  RAW_UTF8.forEach(([label, bytes], i) => {
    if (!strings.length) return;
    const [before, after] = JSON.stringify({ ...base, [strings[i % strings.length]]: '\u0001' }).split('\\u0001');
    out.push({ op, kind: 'unicode', gen: `body string with ${label} bytes`, method: op.method, url, headers: jsonType, body: Buffer.concat([Buffer.from(before), Buffer.from(bytes), Buffer.from(after)]) });
  });
  // The valid body in other media types, charsets and encodings: read as the JSON it is, or refused with 415.
  for (const encoding of ENCODINGS) {
    const send = (value: unknown) => ({ headers: encoding.headers, body: encoding.encode(JSON.stringify(value)) });
    out.push(encoding.refusal
      ? { op, kind: 'media type', gen: `media ${encoding.label}`, method: op.method, url, ...send(base), invalid: true, preAuth: true, expect: expectCode(...encoding.refusal) }
      : { op, kind: 'media type', gen: `media ${encoding.label}`, method: op.method, url, ...send(base), build: async () => send(validBody()),
        expect: (res) => (res.status === 415 || res.body?.error?.code === 'invalid_json' ? `read as JSON, got ${res.status} ${res.body?.error?.code}` : null) });
  }
  return out;
}
