// A sandboxed run's only way out: an HTTP proxy of the run's own, on a Unix socket (bound into a local
// sandbox, where a bridge offers it on the sandbox's loopback as HTTP_PROXY) or on a TCP address (the
// gateway of the Docker egress network, docker-egress.ts). It takes CONNECT (HTTPS, anything
// over TLS) and plain HTTP requests in absolute form, resolves each name itself, checks the policy and
// every address (lib/egress-policy.ts), and connects to the address it checked, so that a name which resolves
// elsewhere a moment later (DNS rebinding) changes nothing. Every refusal reaches the run's trace.
import { lookup } from 'node:dns/promises';
import http from 'node:http';
import { connect, isIP, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { addressRefusal, hostRefusal, type EgressPolicy } from '../lib/egress-policy';

export interface EgressDenial {
  host: string;
  port: number;
  reason: string;
}

export interface EgressOptions {
  policy: EgressPolicy;
  onDenied(denial: EgressDenial): void;
  /** Where a name leads; tests point a made-up public name at a loopback stand-in. */
  resolve?: (host: string) => Promise<string[]>;
  /** Which addresses count as public; tests only, with `resolve`. */
  isPublic?: (address: string) => boolean;
}

const CONNECT_TIMEOUT_MS = 10_000;
/** Connections a run may hold open through the proxy at once. */
const MAX_CONNECTIONS = 256;
/** Headers meant for the proxy, never passed on. */
const HOP_HEADERS = ['proxy-authorization', 'proxy-connection', 'connection', 'keep-alive'];

let deniedTotal = 0;
/** Connections refused by every run's proxy since the process started. */
export const egressDenials = () => deniedTotal;

const resolveAll = async (host: string) => (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/** `host:port` of a CONNECT, `[::1]:443` included; null when it is not one. */
function authorityOf(target: string | undefined): { host: string; port: number } | null {
  if (!target || !URL.canParse(`http://${target}`)) return null;
  const url = new URL(`http://${target}`);
  const port = Number(url.port);
  if (!url.port || port < 1 || port > 65535) return null;
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port };
}

/** A Unix socket's path, or a TCP address (port 0: a free one, which `port` then tells). */
export type EgressListen = string | { host: string; port: number };

export async function openEgress(listen: EgressListen, { policy, onDenied, resolve = resolveAll, isPublic }: EgressOptions) {
  /** The address to connect to, or why not. */
  const decide = async (host: string): Promise<{ address: string } | { reason: string }> => {
    const refused = hostRefusal(policy, host);
    if (refused) return { reason: refused };
    let addresses: string[];
    try {
      addresses = isIP(host) ? [host] : await resolve(host);
    } catch {
      return { reason: 'the name does not resolve' };
    }
    const bad = addressRefusal(addresses, isPublic);
    return bad ? { reason: bad } : { address: addresses[0] };
  };
  const deny = (host: string, port: number, reason: string) => {
    deniedTotal++;
    onDenied({ host: host.slice(0, 253), port, reason });
    return `Flows refused ${host.slice(0, 253)}:${port}: ${reason}.\n`;
  };

  const server = http.createServer({ requestTimeout: 0 });
  server.maxConnections = MAX_CONNECTIONS;
  // A CONNECT's sockets leave the server once upgraded: kept here, to be cut when the run ends.
  const tunnels = new Set<Duplex>();

  server.on('connect', async (req: http.IncomingMessage, client: Duplex, head: Buffer) => {
    client.on('error', () => client.destroy());
    tunnels.add(client);
    client.on('close', () => tunnels.delete(client));
    const authority = authorityOf(req.url);
    if (!authority) return client.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    const decision = await decide(authority.host);
    if ('reason' in decision) {
      const body = deny(authority.host, authority.port, decision.reason);
      return client.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    }
    const upstream: Socket = connect({ host: decision.address, port: authority.port, timeout: CONNECT_TIMEOUT_MS });
    upstream.once('timeout', () => upstream.destroy(new Error('timeout')));
    upstream.once('connect', () => {
      upstream.setTimeout(0);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => (upstream.connecting ? client.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n') : client.destroy()));
    client.on('close', () => upstream.destroy());
  });

  server.on('request', async (req, res) => {
    const url = req.url && URL.canParse(req.url) ? new URL(req.url) : null;
    if (!url || url.protocol !== 'http:') {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('This proxy takes absolute http:// URLs, and CONNECT for the rest.\n');
      return;
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const port = Number(url.port || 80);
    const decision = await decide(host);
    if ('reason' in decision) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end(deny(host, port, decision.reason));
      return;
    }
    const headers = { ...req.headers };
    for (const name of HOP_HEADERS) delete headers[name];
    const upstream = http.request({ host: decision.address, port, method: req.method, path: `${url.pathname}${url.search}`, headers, setHost: false, agent: false, timeout: CONNECT_TIMEOUT_MS });
    upstream.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('timeout', () => upstream.destroy(new Error('timeout')));
    upstream.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502, { 'content-type': 'text/plain' }).end('The upstream did not answer.\n')));
    req.pipe(upstream);
  });

  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(typeof listen === 'string' ? listen : { ...listen, exclusive: true }, () => resolveListen());
  });
  const address = server.address();
  return {
    /** The TCP port it listens on; null on a Unix socket. */
    port: typeof address === 'object' && address ? address.port : null,
    /** Stops taking connections and cuts the ones still open. */
    close: () =>
      new Promise<void>((resolveClose) => {
        server.close(() => resolveClose());
        server.closeAllConnections();
        for (const tunnel of tunnels) tunnel.destroy();
      }),
  };
}
