// Migrates the template database once per run; test files copy it (see databases.ts).
import { mkdirSync, rmSync } from 'node:fs';
import { migrateDatabase } from '../../src/db/migrate';

export default async function globalSetup() {
  process.env.FLOWS_TEST_RUN = `${process.pid}`;
  const { adminQuery, postgresUrl, sqliteDir, sqliteTemplate, templateName, withDatabase } = await import('./databases');
  if (postgresUrl) {
    const template = templateName(postgresUrl);
    await adminQuery(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
    await adminQuery(`CREATE DATABASE "${template}"`);
    await migrateDatabase(withDatabase(postgresUrl, template));
  }
  rmSync(sqliteDir, { recursive: true, force: true });
  mkdirSync(sqliteDir, { recursive: true });
  // The SQLite template is always made: the migration test compares both kinds where it can.
  await migrateDatabase(`file:${sqliteTemplate}`);
}
