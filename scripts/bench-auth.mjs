// `npm run bench`: what authentication costs per API call, on loopback against the built app and a fresh
// embedded database. Each figure is a ratio to GET /healthz (no auth, one trivial query) in the same run.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const root = path.resolve(import.meta.dirname, '..');
const dist = (file) => require(path.join(root, 'dist/src', file));
const { sign } = require('cookie-signature');

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);

async function measure(port, target, headers) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const get = () =>
    new Promise((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path: target, headers, agent }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`${target}: ${res.statusCode}`))));
      });
      req.on('error', reject);
    });
  for (let i = 0; i < 200; i++) await get(); // warm-up
  let sent = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (sent < REQUESTS) {
        sent++;
        await get();
      }
    }),
  );
  agent.destroy();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return REQUESTS / seconds;
}

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flows-bench-'));
  const databaseUrl = `file:${path.join(dir, 'bench.db')}`;
  const { loadConfig } = dist('config.js');
  const { openDatabase } = dist('db/open.js');
  const { buildApp } = dist('app.js');
  const { createLogger } = dist('lib/logger.js');
  const { accountIdOf } = dist('auth/accounts.js');
  const { prismaAdapterFactory } = dist('oauth/adapter.js');

  const config = loadConfig({ DATABASE_URL: databaseUrl, FLOWS_SECRET_KEY: randomBytes(32).toString('hex'), LOG_LEVEL: 'silent', PORT: '0' });
  const logger = createLogger('silent');
  const db = await openDatabase(config, logger);
  // Limits would refuse a benchmark; raise them out of the way.
  const wide = { points: 10_000_000, durationSeconds: 60 };
  const built = await buildApp({ config, db, logger, policies: { api: wide, apiIp: wide } });
  const server = built.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address();

  const { ownerId, tenant } = await built.owners.createOwner({ email: 'bench@example.test', password: 'bench password 123', tenantName: 'Bench' });
  const session = await built.sessions.create(ownerId, tenant.id);
  const cookie = `svc_session=${encodeURIComponent(`s:${sign(session.token, built.cookieSecret)}`)}`;

  const clientId = 'cli_bench';
  await new (prismaAdapterFactory(db))('Client').upsert(clientId, { client_id: clientId, client_name: 'bench', token_endpoint_auth_method: 'none', grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'], response_types: [], redirect_uris: [] }, 0);
  const { provider } = built;
  const accountId = accountIdOf({ ownerId, tenantId: tenant.id, sessionVersion: 1 });
  const grant = new provider.Grant({ accountId, clientId });
  grant.addResourceScope(`${config.baseUrl.origin}/api/v1`, 'flows:read');
  const grantId = await grant.save();
  const token = new provider.AccessToken({ accountId, client: await provider.Client.find(clientId), grantId, scope: 'flows:read', gty: 'device_code' });
  token.setAudience(`${config.baseUrl.origin}/api/v1`);
  const bearer = await token.save();

  const baseline = await measure(port, '/healthz', {});
  const viaSession = await measure(port, '/api/v1/me', { cookie });
  const viaBearer = await measure(port, '/api/v1/me', { authorization: `Bearer ${bearer}` });

  server.close();
  await db.$disconnect();
  rmSync(dir, { recursive: true, force: true });

  const row = (name, rps) => `${name.padEnd(34)} ${rps.toFixed(0).padStart(7)} req/s   ${(rps / baseline).toFixed(2)} × baseline`;
  console.log(`${REQUESTS} requests, ${CONCURRENCY} concurrent, embedded SQLite, loopback`);
  console.log(row('GET /healthz (baseline)', baseline));
  console.log(row('GET /api/v1/me, session cookie', viaSession));
  console.log(row('GET /api/v1/me, bearer token', viaBearer));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
