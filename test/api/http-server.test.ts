// What Node's HTTP server answers before Express sees a request (headers too large, bytes that are not
// HTTP, a request that never finishes arriving) is answered in the error shape, over a real socket.
import type { Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { createHttpServer } from '../../src/http/server';
import { startListeningApp, type ListeningApp } from '../support/server';

let listening: ListeningApp;
beforeAll(async () => {
  listening = await startListeningApp();
});
afterAll(() => listening.close());

/** Writes `bytes` to the server and reads everything it answers until it closes the connection. */
function exchange(port: number, bytes: string): Promise<{ status: number; headers: Record<string, string>; body: any }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, body] = Buffer.concat(chunks).toString('utf8').split('\r\n\r\n');
      const [statusLine, ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) });
    });
  });
}

const portOf = (server: Server | string) => (typeof server === 'string' ? Number(new URL(server).port) : (server.address() as AddressInfo).port);

it.each([
  ['a request line of 20,000 characters (a job id in the path)', `GET /api/v1/jobs/${'j'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431, 'headers_too_large'],
  ['headers over 16 KB', `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: ${'p'.repeat(17 * 1024)}\r\n\r\n`, 431, 'headers_too_large'],
  ['bytes that are not HTTP', 'NOT HTTP AT ALL\r\n\r\n', 400, 'bad_request'],
  ['a header line without a colon', 'GET /healthz HTTP/1.1\r\nHost: x\r\nbroken header\r\n\r\n', 400, 'bad_request'],
])('%s: answered in the error shape', async (_label, bytes, status, code) => {
  const res = await exchange(portOf(listening.url), bytes);
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.body).toEqual({ error: { code, message: expect.any(String) } });
  expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(JSON.stringify(res.body)));
});

it('answers a request that stops arriving with 408 in the error shape, and serves the next one', async () => {
  const server = createHttpServer(listening.app.app, { headersTimeout: 200, requestTimeout: 300, connectionsCheckingInterval: 50 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const res = await exchange(portOf(server), 'GET /healthz HTTP/1.1\r\nHost: x\r\n');
    expect(res.status).toBe(408);
    expect(res.body).toEqual({ error: { code: 'request_timeout', message: expect.any(String) } });
    const ok = await exchange(portOf(server), 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(ok.status).toBe(200);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
