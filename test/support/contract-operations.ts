// The operations of openapi/openapi.yaml as tests generated from it need them (parameters and examples, the
// JSON body's schema and example, the credentials and scopes `security` asks for), and the check of an
// answer against what its operation documents. Everything is read from the document, so a new operation is
// covered by every generated test as soon as it is written there.
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Response } from 'supertest';
import { loadContract } from '../../src/http/contract';
import type { TestApp } from './app';

export const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

export interface Param {
  name: string;
  example: string;
  schema: any;
}

export interface Operation {
  id: string;
  method: string;
  template: string;
  pattern: RegExp;
  pathParams: Param[];
  query: Param[];
  /** `required`: false where the operation may be called without a body. */
  body?: { schema: any; example: any; required: boolean };
  /** Scopes a bearer token must hold; none when any valid credential will do. */
  scopes: string[];
  /** Whether a bearer token (`oauth2` or `http` bearer) is accepted; the session cookie is accepted when `session`. */
  bearer: boolean;
  session: boolean;
  responses: Record<string, any>;
  /** A handler is registered (else 501 not_implemented is expected). */
  implemented: boolean;
}

interface SecurityScheme {
  type: string;
  in?: string;
  scheme?: string;
}

function credentialsOf(schemes: Record<string, SecurityScheme>, security: Record<string, string[]>[]) {
  const names = security.flatMap((requirement) => Object.keys(requirement));
  const scopes = [...new Set(security.flatMap((requirement) => Object.values(requirement).flat()))];
  const isSession = (s: SecurityScheme) => s.type === 'apiKey' && s.in === 'cookie';
  const isBearer = (s: SecurityScheme) => s.type === 'oauth2' || (s.type === 'http' && s.scheme?.toLowerCase() === 'bearer');
  return { scopes, bearer: names.some((n) => isBearer(schemes[n])), session: names.some((n) => isSession(schemes[n])) };
}

export function operationsOf(app: TestApp): Operation[] {
  const definition = app.api.contract.inlined;
  const handlers = app.api.backend.handlers as Record<string, unknown>;
  return Object.entries(definition.paths).flatMap(([template, item]: [string, any]) =>
    METHODS.filter((m) => item[m]).map((m): Operation => {
      const op = item[m];
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])];
      const param = (p: any): Param => ({ name: p.name, example: String(p.example ?? 'x_1'), schema: p.schema });
      const media = op.requestBody?.content?.['application/json'];
      return {
        id: op.operationId,
        method: m.toUpperCase(),
        template,
        pattern: new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}/*$`),
        pathParams: params.filter((p) => p.in === 'path').map(param),
        query: params.filter((p) => p.in === 'query').map(param),
        body: media ? { schema: media.schema, example: media.example ?? media.schema.example, required: op.requestBody.required !== false } : undefined,
        ...credentialsOf(definition.components.securitySchemes, op.security ?? definition.security ?? []),
        responses: op.responses,
        implemented: typeof handlers[op.operationId] === 'function',
      };
    }),
  );
}

export const urlOf = (op: Operation, values: Record<string, string> = {}, query = '') =>
  op.template.replace(/\{(\w+)\}/g, (_, name) => values[name] ?? op.pathParams.find((p) => p.name === name)!.example) + query;

/** Each value of the document's parameter examples mapped to the same parameter's value in `ids`. */
export function exampleIds(ops: Operation[], ids: Record<string, string>): Map<string, string> {
  const map = new Map<string, string>();
  for (const p of ops.flatMap((op) => [...op.pathParams, ...op.query])) if (ids[p.name] !== undefined) map.set(p.example, ids[p.name]);
  return map;
}

/** Each http(s) URL in the examples of request bodies mapped to `url`: nothing a generated request makes calls out. */
export function exampleUrls(ops: Operation[], url: string): Map<string, string> {
  const found = new Map<string, string>();
  const visit = (value: unknown): void => {
    if (typeof value === 'string' && /^https?:\/\//.test(value)) found.set(value, url);
    else if (value && typeof value === 'object') Object.values(value).forEach(visit);
  };
  for (const op of ops) visit(op.body?.example);
  return found;
}

/** `value` with every string equal to an example id replaced by the real id. */
export function withIds(value: unknown, map: Map<string, string>): any {
  if (typeof value === 'string') return map.get(value) ?? value;
  if (Array.isArray(value)) return value.map((item) => withIds(item, map));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withIds(v, map)]));
  return value;
}

// Answers are checked against the document as written, its `$ref`s resolved by Ajv (not by the server's own
// inlining), with the standard formats: a date-time sent back must be RFC 3339 as written.
const { document } = loadContract();
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: false }));
ajv.addSchema(document, 'contract', undefined, false);
const validators = new Map<string, ValidateFunction>();

const segment = (key: string) => encodeURIComponent(key.replace(/~/g, '~0').replace(/\//g, '~1'));
const at = (pointer: string) => pointer.slice(2).split('/').reduce((node: any, key) => node?.[decodeURIComponent(key).replace(/~1/g, '/').replace(/~0/g, '~')], document);

/** A validator of the JSON body of `op`'s answer with `status`, by reference into the document. */
function validatorOf(op: Operation, status: number): ValidateFunction {
  let pointer = `#/paths/${segment(op.template)}/${op.method.toLowerCase()}/responses/${status}`;
  for (let node = at(pointer); node?.$ref; node = at(pointer)) pointer = node.$ref;
  const ref = `contract${pointer}/content/application~1json/schema`;
  return validators.get(ref) ?? validators.set(ref, ajv.compile({ $ref: ref })).get(ref)!;
}

/** Codes a documented response names in its description (`invalid_token`, …): the codes of that status. */
const codesOf = (response: any) => new Set([...String(response.description ?? '').matchAll(/`([a-z][a-z0-9_]*)`/g)].map((m) => m[1]));

/**
 * What is wrong with `res` for what `op` documents: a status it does not document, a success body that does
 * not match the schema of that status (or a body where none is documented), an error code that the status's
 * description does not name.
 */
export function contractProblems(op: Operation, method: string, res: Response): string[] {
  const documented = op.responses[String(res.status)];
  if (!documented) return [`${res.status} not documented for ${op.id}`];
  if (method === 'HEAD') return [];
  const schema = documented.content?.['application/json']?.schema;
  if (res.status < 300) {
    // A text answer (a patch): its media type is what the contract says.
    const text = Object.keys(documented.content ?? {}).find((type) => type.startsWith('text/'));
    if (text) return res.headers['content-type']?.startsWith(text) ? [] : [`${res.status} of ${op.id} is ${res.headers['content-type']}, documented as ${text}`];
    if (!schema) return res.text ? [`${res.status} of ${op.id} has a body, documented without one`] : [];
    const valid = validatorOf(op, res.status);
    return valid(res.body) ? [] : [`${res.status} body of ${op.id} does not match its schema: ${ajv.errorsText(valid.errors)}`];
  }
  const code = res.body?.error?.code;
  if (typeof code === 'string' && !codesOf(documented).has(code)) return [`${res.status} ${code} not among the codes ${op.id} documents for ${res.status}`];
  return [];
}
