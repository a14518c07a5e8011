// A round-robin HTTP proxy for the `pg` part of `npm run bench`, in a process of its own so that it does
// not share the load generator's CPU time: `node scripts/bench-proxy.mjs <port> [<port>…]` forwards each
// request to the next backend on 127.0.0.1 in turn, over keep-alive connections. Prints one JSON line
// `{ port }` once it listens; on SIGTERM prints `{ forwarded, retried, failed }` (per backend) and exits.
import http from 'node:http';

const backends = process.argv.slice(2).map((port) => ({ port: Number(port), agent: new http.Agent({ keepAlive: true, maxSockets: Infinity }), forwarded: 0, retried: 0, failed: 0, errors: {} }));
if (!backends.length || backends.some((b) => !Number.isInteger(b.port))) throw new Error('usage: bench-proxy.mjs <port> [<port>…]');
let next = 0;

// The body is read whole first, so that a request can go again.
const server = http.createServer((req, res) => {
  const backend = backends[next];
  next = (next + 1) % backends.length;
  backend.forwarded++;
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => forward(backend, req, Buffer.concat(chunks), res, true));
});

function forward(backend, req, body, res, mayRetry) {
  const upstream = http.request({ host: '127.0.0.1', port: backend.port, method: req.method, path: req.url, headers: req.headers, agent: backend.agent }, (answer) => {
    res.writeHead(answer.statusCode, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', (err) => {
    // A kept-alive connection the backend closed as this request went out: nothing of it was read, so it
    // goes again once, on another connection (as Node's documentation advises for `reusedSocket`).
    if (mayRetry && upstream.reusedSocket && err.code === 'ECONNRESET' && !res.headersSent) {
      backend.retried++;
      return forward(backend, req, body, res, false);
    }
    backend.failed++;
    const what = `${req.method} ${req.url.split('?')[0].replace(/[^/]+$/, ':x')}${upstream.reusedSocket ? ' on a reused connection' : ''}: ${err.code ?? err.message}`;
    backend.errors[what] = (backend.errors[what] ?? 0) + 1;
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`proxy: ${err.message}`);
  });
  upstream.end(body);
}
server.keepAliveTimeout = 60_000;

process.on('SIGTERM', () => {
  console.log(JSON.stringify({ backends: backends.map(({ port, forwarded, retried, failed, errors }) => ({ port, forwarded, retried, failed, errors: Object.entries(errors).map(([what, n]) => `${n} × ${what}`) })) }));
  process.exit(0);
});

server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
