import { rmSync } from 'node:fs';

export default async function globalTeardown() {
  const { adminQuery, postgresUrl, sqliteDir, templateName } = await import('./databases');
  rmSync(sqliteDir, { recursive: true, force: true });
  if (postgresUrl) await adminQuery(`DROP DATABASE IF EXISTS "${templateName(postgresUrl)}" WITH (FORCE)`);
}
