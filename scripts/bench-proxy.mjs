// A round-robin HTTP proxy for the `pg` part of `npm run bench`, in a process of its own so that it does
// not share the load generator's CPU time: `node scripts/bench-proxy.mjs <port> [<port>…]` forwards each
// request to the next backend on 127.0.0.1 in turn, over keep-alive connections. Prints one JSON line
// `{ port }` once it listens; on SIGTERM prints `{ forwarded, failed }` (per backend) and exits.
import http from 'node:http';

const backends = process.argv.slice(2).map((port) => ({ port: Number(port), agent: new http.Agent({ keepAlive: true, maxSockets: Infinity }), forwarded: 0, failed: 0, errors: {} }));
if (!backends.length || backends.some((b) => !Number.isInteger(b.port))) throw new Error('usage: bench-proxy.mjs <port> [<port>…]');
let next = 0;

const server = http.createServer((req, res) => {
  const backend = backends[next];
  next = (next + 1) % backends.length;
  backend.forwarded++;
  const upstream = http.request({ host: '127.0.0.1', port: backend.port, method: req.method, path: req.url, headers: req.headers, agent: backend.agent }, (answer) => {
    res.writeHead(answer.statusCode, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', (err) => {
    backend.failed++;
    const what = `${req.method} ${req.url.split('?')[0].replace(/[^/]+$/, ':x')}${upstream.reusedSocket ? ' on a reused connection' : ''}: ${err.code ?? err.message}`;
    backend.errors[what] = (backend.errors[what] ?? 0) + 1;
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`proxy: ${err.message}`);
  });
  req.pipe(upstream);
});
server.keepAliveTimeout = 60_000;

process.on('SIGTERM', () => {
  console.log(JSON.stringify({ backends: backends.map(({ port, forwarded, failed, errors }) => ({ port, forwarded, failed, errors: Object.entries(errors).map(([what, n]) => `${n} × ${what}`) })) }));
  process.exit(0);
});

server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
