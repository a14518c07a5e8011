// What the server logs, as an operator reads it: each request once, with its whole path (never its query),
// as JSON lines for a collector or as lines a person reads, secrets redacted either way.
import { Writable } from 'node:stream';
import { createLogger } from '../../src/lib/logger';
import { startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import request from 'supertest';
import { accessToken, createOwner } from '../support/identity';

let app: TestApp;
let headers: Record<string, string>;
beforeAll(async () => {
  app = await startTestApp();
  headers = { authorization: `Bearer ${await accessToken(app, await createOwner(app.database.db))}` };
});
afterAll(() => app.close());

const requestLines = () => app.logLines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'request');

it('logs a request with the whole path it came to, not the path its router sees, and without its query', async () => {
  await call(app, 'GET', '/api/v1/jobs?limit=5', { headers });
  await request(app.app).get('/console/jobs?tab=1');
  const paths = requestLines().map((line) => line.path);
  expect(paths).toContain('/api/v1/jobs');
  expect(paths).toContain('/console/jobs');
  expect(JSON.stringify(requestLines())).not.toContain('limit=5');
  expect(requestLines().find((line) => line.path === '/api/v1/jobs')).toMatchObject({ method: 'GET', status: 200, reqId: expect.any(String) });
});

describe('pretty logs', () => {
  const collect = () => {
    const lines: string[] = [];
    const stream = new Writable({ write: (chunk, _encoding, done) => (lines.push(...String(chunk).split('\n').filter(Boolean)), done()) });
    return { lines, stream };
  };

  it('are lines a person reads: time, level, message, then the fields; secrets redacted as in JSON', () => {
    const { lines, stream } = collect();
    const logger = createLogger('info', stream, { pretty: true });
    logger.info({ req: { headers: { authorization: 'Bearer flows_at_secret' } }, path: '/api/v1/jobs' }, 'request');
    logger.debug('not at this level');
    expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: request$/);
    expect(lines.join('\n')).toContain('path: "/api/v1/jobs"');
    expect(lines.join('\n')).toContain('[redacted]');
    expect(lines.join('\n')).not.toContain('flows_at_secret');
    expect(lines.join('\n')).not.toContain('not at this level');
    expect(() => JSON.parse(lines[0])).toThrow();
  });

  it('are JSON lines otherwise', () => {
    const { lines, stream } = collect();
    createLogger('info', stream).info({ path: '/x' }, 'request');
    expect(JSON.parse(lines[0])).toMatchObject({ level: 30, msg: 'request', path: '/x' });
  });
});
