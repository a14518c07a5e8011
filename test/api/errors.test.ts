// Every failure leaves in the error shape with the status of spec section 7; nothing malformed is a 5xx.
import express from 'express';
import pino from 'pino';
import request from 'supertest';
import { errorHandler } from '../../src/http/error-handler';
import { requestContext } from '../../src/http/request-context';
import { createLogger } from '../../src/lib/logger';
import { startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner } from '../support/identity';

let app: TestApp;
let bearer: Record<string, string>;
const validJob = { name: 'Triage', promptTemplate: 'Look at {{ data.issue.title }}' };

beforeAll(async () => {
  app = await startTestApp();
  const owner = await createOwner(app.database.db);
  bearer = { authorization: `Bearer ${await accessToken(app, owner)}` };
});
afterAll(() => app.close());

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
  expect(Object.keys(res.body)).toEqual(['error']);
}

describe('request bodies', () => {
  it('refuses malformed JSON with 400 invalid_json', async () => {
    const res = await call(app, 'POST', '/api/v1/jobs', { headers: { ...bearer, 'content-type': 'application/json' }, raw: '{"name": "x",' });
    expectError(res, 400, 'invalid_json');
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/jsonx', 'multipart/form-data; boundary=x'])(
    'refuses Content-Type %s with 415 before parsing',
    async (type) => {
      const res = await call(app, 'POST', '/api/v1/jobs', { headers: { ...bearer, 'content-type': type }, raw: JSON.stringify(validJob) });
      expectError(res, 415, 'unsupported_media_type');
    },
  );

  it('refuses a body without Content-Type with 415', async () => {
    const res = await request(app.app).post('/api/v1/jobs').set(bearer).send(Buffer.from(JSON.stringify(validJob)));
    expectError(res, 415, 'unsupported_media_type');
  });

  it('accepts application/json with a charset parameter', async () => {
    const res = await call(app, 'POST', '/api/v1/jobs', {
      headers: { ...bearer, 'content-type': 'application/json; charset=utf-8' },
      raw: JSON.stringify(validJob),
    });
    expect(res.status).toBe(201);
  });

  it('refuses a body whose content encoding does not decode with 400 invalid_json, a code the contract documents', async () => {
    const res = await call(app, 'POST', '/api/v1/jobs', { headers: { ...bearer, 'content-type': 'application/json', 'content-encoding': 'gzip' }, raw: JSON.stringify(validJob) });
    expectError(res, 400, 'invalid_json');
  });

  it('refuses a charset it cannot decode with 415', async () => {
    const res = await call(app, 'POST', '/api/v1/jobs', { headers: { ...bearer, 'content-type': 'application/json; charset=koi8-r' }, raw: '{}' });
    expectError(res, 415, 'unsupported_media_type');
  });

  it('reports a missing body as a 400 naming the body', async () => {
    const res = await call(app, 'POST', '/api/v1/jobs', { headers: bearer });
    expectError(res, 400, 'validation_failed');
    expect(res.body.error.message).toBe('The request body is required.');
  });

  it('refuses a body over the size limit with 413, or 400 on the operations of the interface specification', async () => {
    const res = await call(app, 'PATCH', '/api/v1/jobs/any', { headers: bearer, body: { promptTemplate: 'x'.repeat(1_100_000) } });
    expectError(res, 413, 'payload_too_large');
    const seed = await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { ...validJob, promptTemplate: 'x'.repeat(1_100_000) } });
    expectError(seed, 400, 'payload_too_large');
  });

  it('refuses JSON nested deeper than the limit with 400 invalid_json, as the contract says', async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = { a: deep };
    const res = await call(app, 'POST', '/api/v1/job-conditions/test', { headers: bearer, body: { webhook: deep } });
    expectError(res, 400, 'invalid_json');
    expect(res.body.error.message).toBe('The request body nests deeper than 32 levels.');
  });

  it('names the field and the rule of a schema violation', async () => {
    const res = await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { ...validJob, concurrencyLimit: 51 } });
    expectError(res, 400, 'validation_failed');
    expect(res.body.error.message).toBe('`concurrencyLimit` must be <= 50 (maximum).');
  });

  it('takes a body that is a JSON string for the string it is, not for the JSON inside it', async () => {
    for (const raw of [JSON.stringify(JSON.stringify(validJob)), '"a string"']) {
      const res = await call(app, 'POST', '/api/v1/jobs', { headers: { ...bearer, 'content-type': 'application/json' }, raw });
      expectError(res, 400, 'validation_failed');
      expect(res.body.error.message).toBe('`body` must be object (type).');
    }
  });

  it('takes an empty JSON body for no body', async () => {
    const res = await call(app, 'POST', '/api/v1/jobs', { headers: { ...bearer, 'content-type': 'application/json' }, raw: '' });
    expectError(res, 400, 'validation_failed');
    expect(res.body.error.message).toBe('The request body is required.');
  });

  it('refuses a trigger that is not an object', async () => {
    const res = await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { ...validJob, triggers: [42] } });
    expectError(res, 400, 'validation_failed');
    expect(res.body.error.message).toBe('`triggers[0]` must be object (type).');
  });

  it('quotes at most 100 characters of a property name it refuses', async () => {
    const name = 'k'.repeat(100_000);
    const res = await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { ...validJob, [name]: 1 } });
    expectError(res, 400, 'validation_failed');
    expect(res.body.error.message).toBe(`\`${'k'.repeat(100)}…\` is not an allowed property.`);
  });

  it('refuses an unknown query parameter with 400', async () => {
    const res = await call(app, 'GET', '/api/v1/jobs?colour=blue', { headers: bearer });
    expectError(res, 400, 'validation_failed');
    expect(res.body.error.message).toContain('`colour`');
  });

  it('refuses a query parameter of the wrong type with 400', async () => {
    const res = await call(app, 'GET', '/api/v1/jobs?limit=lots', { headers: bearer });
    expectError(res, 400, 'validation_failed');
    expect(res.body.error.message).toContain('`limit`');
  });
});

describe('routing', () => {
  it.each(['/api/v1/nothing-here', '/api/v2/jobs', '/nothing-here'])('answers 404 for the unknown path %s', async (path) => {
    const res = await call(app, 'GET', path, { headers: bearer });
    expectError(res, 404, 'not_found');
  });

  it('answers 405 with Allow for a method the path does not have', async () => {
    const res = await call(app, 'PUT', '/api/v1/jobs', { headers: bearer, body: validJob });
    expectError(res, 405, 'method_not_allowed');
    expect(res.headers.allow).toBe('GET, POST, HEAD');
  });

  it('answers HEAD wherever GET is answered, with the same status and headers and no body', async () => {
    const get = await call(app, 'GET', '/api/v1/me', { headers: bearer });
    const head = await request(app.app).head('/api/v1/me').set(bearer);
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe(get.headers['content-type']);
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    expect(head.text).toBeUndefined();
    expect((await request(app.app).head('/api/v1/me')).status).toBe(401);
  });

  it.each(['/api/v1/jobs/%zz', '/api/v1/runs/%E0%A4%A', '/api/v1/jobs/%'])('refuses the malformed percent-encoding of %s with 400 before authentication', async (path) => {
    const res = await call(app, 'GET', path);
    expectError(res, 400, 'invalid_path');
  });

  it('refuses a NUL character in the path, a query parameter or the body, which no database column can hold', async () => {
    expectError(await call(app, 'DELETE', '/api/v1/access-tokens/%00', { headers: bearer }), 400, 'invalid_path');
    expectError(await call(app, 'GET', '/api/v1/jobs?cursor=a%00b', { headers: bearer }), 400, 'validation_failed');
    const res = await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { ...validJob, name: 'a\u0000b' } });
    expectError(res, 400, 'validation_failed');
    expect(res.body.error.message).toContain('NUL');
    // An unpaired surrogate: PostgreSQL's jsonb refuses it, and text would silently replace it.
    const surrogate = await request(app.app).post('/api/v1/jobs').set({ ...bearer, 'content-type': 'application/json' }).send(JSON.stringify(validJob).replace('"name":"', '"name":"\\ud800'));
    expectError(surrogate, 400, 'validation_failed');
    expect(surrogate.body.error.message).toContain('surrogate');
  });

  it('marks every API answer, success or error, as not to be stored', async () => {
    for (const [path, headers] of [['/api/v1/me', bearer], ['/api/v1/me', {}], ['/api/v1/nothing-here', bearer], ['/api/v1/jobs/%zz', {}]] as const) {
      const res = await request(app.app).get(path).set(headers);
      expect(`${path} ${res.status} ${res.headers['cache-control']}`).toBe(`${path} ${res.status} no-store`);
    }
  });

});

describe('request ids', () => {
  it('keeps a well-formed incoming X-Request-Id and answers it', async () => {
    const res = await call(app, 'GET', '/api/v1/me', { headers: { ...bearer, 'x-request-id': 'trace-123' } });
    expect(res.headers['x-request-id']).toBe('trace-123');
  });

  it('replaces a malformed X-Request-Id with a fresh one', async () => {
    const res = await call(app, 'GET', '/api/v1/me', { headers: { ...bearer, 'x-request-id': 'bad id <script>' } });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('unexpected failures', () => {
  it('answers 500 internal_error without the detail, which goes to the log with the request id', async () => {
    const lines: string[] = [];
    const sink = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const failing = express();
    failing.use(requestContext(sink));
    failing.get('/boom', () => {
      throw new Error('connection string postgres://admin:hunter2@db/prod');
    });
    failing.use(errorHandler);
    const res = await request(failing).get('/boom');
    expectError(res, 500, 'internal_error');
    expect(res.text).not.toContain('hunter2');
    const requestId = res.headers['x-request-id'];
    expect(res.body.error.message).toContain(requestId);
    const logged = lines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'unhandled error');
    expect(logged.reqId).toBe(requestId);
    expect(logged.err.message).toContain('hunter2');
  });
});

describe('database unavailable', () => {
  let down: TestApp;
  let feeds: TestApp['changes'][] = [];
  beforeAll(async () => {
    down = await startTestApp();
    // The same app, but its database is a PostgreSQL server that is not there.
    const { createDb } = await import('../../src/db/client');
    const { buildApp } = await import('../../src/app');
    const db = await createDb('postgresql://postgres@127.0.0.1:1/none');
    const { changes: ownFeed } = down;
    Object.assign(down, await buildApp({ config: down.config, db, logger: createLogger('silent') }));
    // The app built here listens on the real database too (PostgreSQL); closed with the test app's own.
    feeds = [down.changes, ownFeed];
    down.changes = null;
  });
  afterAll(async () => {
    for (const feed of feeds) await feed?.close();
    // The built app's own work queue (on PostgreSQL, on the real database); the test app's is stopped by close.
    await down.queue.stop();
    await down.close();
  });

  it('answers /readyz with 503 while /healthz stays 200', async () => {
    expect((await request(down.app).get('/healthz')).status).toBe(200);
    const res = await request(down.app).get('/readyz');
    expectError(res, 503, 'service_unavailable');
    expect(res.headers['retry-after']).toBeDefined();
  });

  it('answers an API call that needs the database with 503', async () => {
    const res = await call(down, 'GET', '/api/v1/me', { headers: { authorization: 'Bearer some-token' } });
    expectError(res, 503, 'service_unavailable');
  });
});
