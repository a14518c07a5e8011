// Key rotation: with the old key in FLOWS_SECRET_KEY_PREVIOUS the server still opens every stored secret,
// and `npm run secrets:reseal` re-encrypts them all with the new key, after which the old one can go.
import { randomBytes } from 'node:crypto';
import { resealSecrets } from '../../src/cli/reseal-secrets';
import { createSecretBox } from '../../src/lib/secrets';
import { createTestDatabase, type TestDatabase } from '../support/databases';
import { createOwner } from '../support/identity';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

it('re-seals every stored secret with the new key', async () => {
  const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
  const old = createSecretBox(oldKey);
  const { tenantId } = await createOwner(database.db);
  const db = database.db;
  await db.webhookSource.create({ data: { id: 'src_r', tenantId, name: 's', format: 'github', secretCiphertext: old.seal('whsec_source') } });
  await db.eventSubscription.create({ data: { id: 'sub_r', tenantId, url: 'https://x.example', events: ['run.failed'], secretCiphertext: old.seal('whsec_sub') } });
  await db.vmhostConnection.create({ data: { id: 'vmc_r', tenantId, name: 'c', apiBaseUrl: 'https://x.example', tokenCiphertext: old.seal('vm-token') } });
  await db.agentIntegration.create({ data: { id: 'agi_r', tenantId, project: 'p', apiBaseUrl: 'https://x.example', tokenCiphertext: old.seal('agent-token') } });

  // During the change the server opens old and new alike.
  expect(createSecretBox(newKey, [oldKey]).open((await db.vmhostConnection.findUniqueOrThrow({ where: { id: 'vmc_r' } })).tokenCiphertext)).toBe('vm-token');

  const lines: string[] = [];
  const env = { DATABASE_URL: database.url, FLOWS_SECRET_KEY: newKey.toString('hex'), FLOWS_SECRET_KEY_PREVIOUS: oldKey.toString('hex'), FLOWS_MIGRATE_ON_START: 'false', LOG_LEVEL: 'silent' };
  expect(await resealSecrets(env, { log: (line) => lines.push(line) })).toBe(0);
  expect(lines[0]).toMatch(/^Re-sealed 4 stored secrets/);

  const only = createSecretBox(newKey);
  expect(only.open((await db.webhookSource.findUniqueOrThrow({ where: { id: 'src_r' } })).secretCiphertext)).toBe('whsec_source');
  expect(only.open((await db.eventSubscription.findUniqueOrThrow({ where: { id: 'sub_r' } })).secretCiphertext)).toBe('whsec_sub');
  expect(only.open((await db.vmhostConnection.findUniqueOrThrow({ where: { id: 'vmc_r' } })).tokenCiphertext)).toBe('vm-token');
  const { tokenCiphertext } = await db.agentIntegration.findUniqueOrThrow({ where: { id: 'agi_r' } });
  expect(only.open(tokenCiphertext)).toBe('agent-token');
  expect(() => old.open(tokenCiphertext)).toThrow();
});
