import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { providerOf, type DatabaseProvider } from '../config';
import { projectRoot } from '../lib/paths';
import type { Db } from './client';

const run = promisify(execFile);

const migrationsOf = (provider: DatabaseProvider) =>
  readdirSync(path.join(projectRoot, 'prisma', provider, 'migrations')).filter((entry) => /^\d{14}_/.test(entry));

/** Names of the migrations in the repository that the database has not applied (all of them on a new database). */
export async function pendingMigrations(db: Db, provider: DatabaseProvider): Promise<string[]> {
  let applied: { migration_name: string }[] = [];
  try {
    applied = await db.$queryRawUnsafe('SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL');
  } catch {
    // No migration table yet.
  }
  const done = new Set(applied.map((row) => row.migration_name));
  return migrationsOf(provider).filter((name) => !done.has(name));
}

/** Applies the pending migrations of the URL's provider with the Prisma CLI (JS schema engine, offline). */
export async function migrateDatabase(url: string): Promise<void> {
  const provider = providerOf(url);
  if (!provider) throw new Error('unsupported database URL');
  const cli = require.resolve('prisma/build/index.js', { paths: [projectRoot] });
  await run(process.execPath, [cli, 'migrate', 'deploy', '--config', path.join('prisma', provider, 'prisma.config.ts')], {
    cwd: projectRoot,
    env: { ...process.env, DATABASE_URL: url, PRISMA_HIDE_UPDATE_MESSAGE: '1' },
    timeout: 120_000,
  });
}
