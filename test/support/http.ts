// Requests through supertest with every response checked against the contract: the status must be
// documented for the operation and the body must match its schema (errors outside any operation
// must have the Error shape).
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import request, { type Response } from 'supertest';
import type { TestApp } from './app';

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const compiled = new Map<object, ValidateFunction>();

function validatorFor(schema: object): ValidateFunction {
  if (!compiled.has(schema)) compiled.set(schema, ajv.compile(schema));
  return compiled.get(schema)!;
}

/** Any app instance of a test: the one startTestApp made, or another on its database (startOtherInstance). */
type AnyApp = Pick<TestApp, 'app' | 'api'>;

export function assertMatchesContract(app: AnyApp, method: string, path: string, res: Response): void {
  const inlined = app.api.contract.inlined;
  const matched = app.api.backend.router.matchOperation({ method, path: path.split('?')[0], headers: {}, query: {} } as any);
  const where = `${method.toUpperCase()} ${path} → ${res.status}`;
  if (!matched) {
    const valid = validatorFor(inlined.components.schemas.Error);
    if (!valid(res.body)) throw new Error(`${where}: body is not the Error shape: ${JSON.stringify(res.body)}`);
    return;
  }
  const operation = inlined.paths[matched.path][matched.method];
  const response = operation.responses[String(res.status)];
  if (!response) throw new Error(`${where}: status not documented for ${operation.operationId}`);
  const text = Object.keys(response.content ?? {}).find((type) => type.startsWith('text/'));
  if (text) {
    if (!res.headers['content-type']?.startsWith(text)) throw new Error(`${where}: ${operation.operationId} answers ${text}, not ${res.headers['content-type']}`);
    return;
  }
  const schema = response.content?.['application/json']?.schema;
  if (!schema) {
    if (res.text) throw new Error(`${where}: ${operation.operationId} documents no body but one was sent`);
    return;
  }
  const valid = validatorFor(schema);
  if (!valid(res.body)) {
    throw new Error(`${where}: body does not match ${operation.operationId}: ${ajv.errorsText(valid.errors)}\n${JSON.stringify(res.body)}`);
  }
}

export interface CallOptions {
  headers?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as is, with the content type given in headers. */
  raw?: string | Buffer;
}

export async function call(app: AnyApp, method: string, path: string, { headers = {}, body, raw }: CallOptions = {}): Promise<Response> {
  let test = (request(app.app) as any)[method.toLowerCase()](path) as request.Test;
  for (const [name, value] of Object.entries(headers)) test = test.set(name, value);
  if (raw !== undefined) test = test.send(raw as any);
  else if (body !== undefined) test = test.send(body as object);
  const res = await test;
  assertMatchesContract(app, method, path, res);
  return res;
}
