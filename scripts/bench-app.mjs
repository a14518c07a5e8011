// The built app as the bench scripts run it: a fresh embedded database with API rate limits off, and an
// access token for every scope issued by the app's own authorization server (no device flow to click).
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const root = path.resolve(import.meta.dirname, '..');
export const dist = (file) => require(path.join(root, 'dist', file));

/** Config, logger and a migrated database `name` in `dir`; `createDb(url)` replaces the app's client (query counting). */
export async function openApp(dir, { name = 'app.db', createDb, env = {} } = {}) {
  const config = dist('src/config.js').loadConfig({ DATABASE_URL: `file:${path.join(dir, name)}`, FLOWS_SECRET_KEY: randomBytes(32).toString('hex'), LOG_LEVEL: 'silent', FLOWS_RATE_LIMIT_API: '0', FLOWS_RATE_LIMIT_API_ADDRESS: '0', ...env });
  const logger = dist('src/lib/logger.js').createLogger('silent');
  let db = await dist('src/db/open.js').openDatabase(config, logger);
  if (createDb) {
    await db.$disconnect();
    db = await createDb(config.databaseUrl);
  }
  return { config, logger, db };
}

/** The app built on `opened`, with its owner's tenant and a bearer token for every scope. */
export async function buildWithBearer({ config, logger, db }) {
  const built = await dist('src/app.js').buildApp({ config, db, logger });
  const { ownerId, tenant } = await built.owners.createOwner({ email: 'bench@example.test', password: 'bench password 123', tenantName: 'Bench' });
  return { built, bearer: await bearerFor(built, { config, db }, { ownerId, tenantId: tenant.id }), owner: { ownerId, tenantId: tenant.id } };
}

/** An access token for every scope, issued by the app's own authorization server, bound to the API or `resource`. */
export async function bearerFor(built, { config, db }, { ownerId, tenantId }, resource = `${config.baseUrl.origin}/api/v1`) {
  const clientId = 'cli_bench';
  await new (dist('src/oauth/adapter.js').prismaAdapterFactory(db))('Client').upsert(clientId, { client_id: clientId, client_name: 'bench', token_endpoint_auth_method: 'none', grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'], response_types: [], redirect_uris: [] }, 0);
  const { provider } = built;
  const accountId = dist('src/auth/accounts.js').accountIdOf({ ownerId, tenantId, sessionVersion: 1 });
  const scope = 'flows:read flows:write runs:read runs:write';
  const grant = new provider.Grant({ accountId, clientId });
  grant.addResourceScope(resource, scope);
  const token = new provider.AccessToken({ accountId, client: await provider.Client.find(clientId), grantId: await grant.save(), scope, gty: 'device_code' });
  token.setAudience(resource);
  return token.save();
}

/** The job the `invoke` row calls, created through the API: no execution target, so its runs fail at dispatch. */
export async function createBenchJob(baseUrl, bearer) {
  const res = await fetch(`${baseUrl}/api/v1/jobs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench', promptTemplate: 'Issue {{ data.n }}', concurrencyLimit: 50 }),
  });
  if (res.status !== 201) throw new Error(`POST /api/v1/jobs answered ${res.status}: ${await res.text()}`);
  return res.json();
}
