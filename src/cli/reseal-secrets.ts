// `npm run secrets:reseal`: after FLOWS_SECRET_KEY changed (with the old key in FLOWS_SECRET_KEY_PREVIOUS),
// re-encrypts every stored secret with the current key, so that the previous key can be dropped.
import { ConfigError, loadConfig } from '../config';
import { openDatabase } from '../db/open';
import { createLogger } from '../lib/logger';
import { createSecretBox } from '../lib/secrets';

export async function resealSecrets(env: NodeJS.ProcessEnv, io: { log(line: string): void } = console): Promise<number> {
  const config = loadConfig(env);
  const db = await openDatabase(config, createLogger('warn'));
  const box = createSecretBox(config.secretKey, config.previousSecretKeys);
  const reseal = (sealed: string) => box.seal(box.open(sealed));
  try {
    let count = 0;
    for (const row of await db.webhookSource.findMany({ select: { id: true, secretCiphertext: true } })) {
      await db.webhookSource.update({ where: { id: row.id }, data: { secretCiphertext: reseal(row.secretCiphertext) } });
      count++;
    }
    for (const row of await db.eventSubscription.findMany({ select: { id: true, secretCiphertext: true } })) {
      await db.eventSubscription.update({ where: { id: row.id }, data: { secretCiphertext: reseal(row.secretCiphertext) } });
      count++;
    }
    for (const row of await db.vmhostConnection.findMany({ select: { id: true, tokenCiphertext: true } })) {
      await db.vmhostConnection.update({ where: { id: row.id }, data: { tokenCiphertext: reseal(row.tokenCiphertext) } });
      count++;
    }
    for (const row of await db.agentIntegration.findMany({ select: { id: true, tokenCiphertext: true } })) {
      await db.agentIntegration.update({ where: { id: row.id }, data: { tokenCiphertext: reseal(row.tokenCiphertext) } });
      count++;
    }
    io.log(`Re-sealed ${count} stored secret${count === 1 ? '' : 's'} with the current FLOWS_SECRET_KEY; FLOWS_SECRET_KEY_PREVIOUS can now be removed.`);
    return 0;
  } finally {
    await db.$disconnect();
  }
}

if (require.main === module) {
  resealSecrets(process.env).then(
    (code) => process.exit(code),
    (err) => {
      console.error(err instanceof ConfigError ? err.message : `secrets:reseal failed: ${err instanceof Error ? err.message : err}`);
      process.exit(1);
    },
  );
}
