// An HTTP proxy on loopback in front of a real server that records every exchange passing through it: what a
// client sent (method, path, form fields) and what it was answered, in order. Clients then reach the server
// by the proxy's address, as they would through a load balancer or a port forward.
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Exchange {
  method: string;
  path: string;
  /** The request body read as form fields (empty for other bodies). */
  form: URLSearchParams;
  status: number;
  body: string;
}

export interface RecordingProxy {
  port: number;
  /** The server requests are forwarded to (an origin); set once it listens. */
  target: string;
  exchanges: Exchange[];
  close(): Promise<void>;
}

const read = (stream: NodeJS.ReadableStream) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });

export async function startRecordingProxy(): Promise<RecordingProxy> {
  const proxy: RecordingProxy = { port: 0, target: '', exchanges: [], close: async () => {} };
  const server = createServer(async (req, res) => {
    const sent = await read(req);
    const target = new URL(proxy.target);
    const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, async (answer) => {
      const received = await read(answer);
      const isForm = /^application\/x-www-form-urlencoded/.test(req.headers['content-type'] ?? '');
      proxy.exchanges.push({ method: req.method!, path: req.url!, form: new URLSearchParams(isForm ? sent.toString() : ''), status: answer.statusCode!, body: received.toString() });
      const headers: IncomingHttpHeaders = { ...answer.headers, 'content-length': String(received.length) };
      delete headers['transfer-encoding'];
      res.writeHead(answer.statusCode!, headers).end(received);
    });
    upstream.on('error', () => res.destroy());
    upstream.end(sent);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.port = (server.address() as AddressInfo).port;
  proxy.close = () => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  return proxy;
}
