// One server for `npm run bench`, in a process of its own so that the load generator does not share its
// CPU time: `node scripts/bench-server.mjs <kind> <dir>`. Prints one JSON line `{ port, ... }` once it
// listens, then serves until killed.
//   sqlite-insert   baseline (a): bare Express 5 + better-sqlite3, one prepared INSERT of a run-like row
//   prisma-create   baseline (b): Express 5 + one Prisma `create` of a run, on the app's own schema
//   app             the built app on a fresh embedded database, with a bearer token for every scope
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const root = path.resolve(import.meta.dirname, '..');
const dist = (file) => require(path.join(root, 'dist/src', file));
const express = require('express');
const [kind, dir] = process.argv.slice(2);

const row = () => ({ id: `run_${randomUUID()}`, name: 'Issue #42', state: 'queued', triggerType: 'invocation', prompt: 'Fix issue #42 in acme/widgets.', inputs: { data: { issueNumber: 42 } } });

async function openApp() {
  const config = dist('config.js').loadConfig({ DATABASE_URL: `file:${path.join(dir, 'app.db')}`, FLOWS_SECRET_KEY: randomBytes(32).toString('hex'), LOG_LEVEL: 'silent', FLOWS_RATE_LIMIT_API: '0', FLOWS_RATE_LIMIT_API_ADDRESS: '0' });
  const logger = dist('lib/logger.js').createLogger('silent');
  const db = await dist('db/open.js').openDatabase(config, logger);
  return { config, logger, db };
}

async function sqliteInsert() {
  const Database = require('better-sqlite3');
  const db = new Database(path.join(dir, 'baseline.db'));
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE run (id TEXT PRIMARY KEY, tenantId TEXT, jobId TEXT, name TEXT, state TEXT, triggerType TEXT, prompt TEXT, inputs TEXT, createdAt TEXT)');
  const insert = db.prepare('INSERT INTO run VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
  return express()
    .use(express.json())
    .post('/runs', (_req, res) => {
      const r = row();
      insert.run(r.id, 'ten_bench', 'job_bench', r.name, r.state, r.triggerType, r.prompt, JSON.stringify(r.inputs), new Date().toISOString());
      res.status(201).json({ id: r.id });
    });
}

async function prismaCreate() {
  const { db } = await openApp();
  await db.tenant.create({ data: { id: 'ten_bench', name: 'Bench' } });
  await db.job.create({ data: { id: 'job_bench', tenantId: 'ten_bench', name: 'Bench', slug: 'bench', promptTemplate: 'x' } });
  return express()
    .use(express.json())
    .post('/runs', async (_req, res) => {
      const created = await db.run.create({ data: { ...row(), tenantId: 'ten_bench', jobId: 'job_bench' }, select: { id: true } });
      res.status(201).json(created);
    });
}

/** The app, and an access token for every scope issued by its own authorization server. */
async function app() {
  const { config, logger, db } = await openApp();
  const built = await dist('app.js').buildApp({ config, db, logger });
  const { ownerId, tenant } = await built.owners.createOwner({ email: 'bench@example.test', password: 'bench password 123', tenantName: 'Bench' });
  const clientId = 'cli_bench';
  await new (dist('oauth/adapter.js').prismaAdapterFactory(db))('Client').upsert(clientId, { client_id: clientId, client_name: 'bench', token_endpoint_auth_method: 'none', grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'], response_types: [], redirect_uris: [] }, 0);
  const { provider } = built;
  const accountId = dist('auth/accounts.js').accountIdOf({ ownerId, tenantId: tenant.id, sessionVersion: 1 });
  const scope = 'flows:read flows:write runs:read runs:write';
  const audience = `${config.baseUrl.origin}/api/v1`;
  const grant = new provider.Grant({ accountId, clientId });
  grant.addResourceScope(audience, scope);
  const token = new provider.AccessToken({ accountId, client: await provider.Client.find(clientId), grantId: await grant.save(), scope, gty: 'device_code' });
  token.setAudience(audience);
  return Object.assign(built.app, { extra: { bearer: await token.save() } });
}

const server = await { 'sqlite-insert': sqliteInsert, 'prisma-create': prismaCreate, app }[kind]();
const listening = server.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ port: listening.address().port, ...(server.extra ?? {}) }));
});
