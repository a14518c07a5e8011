import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { providerOf, type DatabaseProvider } from '../config';
import { projectRoot } from '../lib/paths';

const run = promisify(execFile);

const migrationsDir = (provider: DatabaseProvider) => path.join(projectRoot, 'prisma', provider, 'migrations');
export const migrationsOf = (provider: DatabaseProvider) => readdirSync(migrationsDir(provider)).filter((entry) => /^\d{14}_/.test(entry)).sort();

/** Reads rows with one SQL statement: the Prisma client's raw query, or a plain `pg` client's. */
type Query = (sql: string) => Promise<unknown[]>;
const APPLIED = 'SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL';

/** Names of the migrations in the repository that the database has not applied (all of them on a new database). */
export async function pendingMigrations(query: Query, provider: DatabaseProvider): Promise<string[]> {
  let applied: { migration_name: string }[] = [];
  try {
    applied = (await query(APPLIED)) as typeof applied;
  } catch {
    // No migration table yet.
  }
  const done = new Set(applied.map((row) => row.migration_name));
  return migrationsOf(provider).filter((name) => !done.has(name));
}

/** Prisma's own table of applied migrations, as its CLI makes it on SQLite. */
const SQLITE_MIGRATIONS_TABLE = `CREATE TABLE "_prisma_migrations" (
    "id"                    TEXT PRIMARY KEY NOT NULL,
    "checksum"              TEXT NOT NULL,
    "finished_at"           DATETIME,
    "migration_name"        TEXT NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        DATETIME,
    "started_at"            DATETIME NOT NULL DEFAULT current_timestamp,
    "applied_steps_count"   INTEGER UNSIGNED NOT NULL DEFAULT 0
)`;

/** An instant as Prisma's CLI writes it on SQLite. */
const prismaInstant = (at: Date) => at.toISOString().replace('Z', '+00:00');

/**
 * A new SQLite database gets every migration here, in this process, recorded as Prisma's CLI records them
 * (its table, the file's SHA-256 as checksum), so that the CLI finds nothing pending afterwards: a first
 * start spares the CLI's child process (about 1.2 s of CPU). Each script runs outside a transaction, as the
 * CLI runs it (its `PRAGMA foreign_keys` would do nothing inside one); one that fails is recorded as failed,
 * with its error, which the CLI then reports as it would its own.
 */
function migrateNewSqlite(file: string): void {
  const Database = require('better-sqlite3') as typeof import('better-sqlite3');
  const db = new Database(file);
  try {
    db.exec(SQLITE_MIGRATIONS_TABLE);
    const record = db.prepare('INSERT INTO "_prisma_migrations" ("id", "checksum", "finished_at", "migration_name", "logs", "started_at", "applied_steps_count") VALUES (?, ?, ?, ?, ?, ?, ?)');
    for (const name of migrationsOf('sqlite')) {
      const script = readFileSync(path.join(migrationsDir('sqlite'), name, 'migration.sql'), 'utf8');
      const checksum = createHash('sha256').update(script).digest('hex');
      const startedAt = prismaInstant(new Date());
      try {
        db.exec(script);
      } catch (err) {
        record.run(randomUUID(), checksum, null, name, (err as Error).message, startedAt, 0);
        throw err;
      }
      record.run(randomUUID(), checksum, prismaInstant(new Date()), name, null, startedAt, 1);
    }
  } finally {
    db.close();
  }
}

/** Applies the pending migrations with the Prisma CLI (JS schema engine, offline), in a child process. */
async function migrateWithCli(url: string, provider: DatabaseProvider): Promise<void> {
  const cli = require.resolve('prisma/build/index.js', { paths: [projectRoot] });
  await run(process.execPath, [cli, 'migrate', 'deploy', '--config', path.join('prisma', provider, 'prisma.config.ts')], {
    cwd: projectRoot,
    env: { ...process.env, DATABASE_URL: url, PRISMA_HIDE_UPDATE_MESSAGE: '1' },
    timeout: 120_000,
  });
}

/**
 * Instances started together on one PostgreSQL take turns under a lock of their own, held by this session
 * for as long as the CLI runs: the CLI's own lock gives up after 10 s, and a second instance started beside
 * a first migration failed its start with "Timed out trying to acquire a postgres advisory lock". The one
 * that waited finds nothing pending, and skips the CLI.
 */
async function migratePostgres(url: string): Promise<void> {
  const { Client } = require('pg') as typeof import('pg');
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock(hashtext('flows.migrate'))");
    const pending = await pendingMigrations(async (sql) => (await client.query(sql)).rows, 'postgresql');
    if (pending.length > 0) await migrateWithCli(url, 'postgresql');
  } finally {
    await client.end(); // the lock ends with the session
  }
}

/**
 * Applies the pending migrations of the URL's provider: all of them to a new SQLite database in this process,
 * on PostgreSQL one instance at a time, otherwise with the Prisma CLI.
 */
export async function migrateDatabase(url: string, { fresh = false } = {}): Promise<void> {
  const provider = providerOf(url);
  if (!provider) throw new Error('unsupported database URL');
  if (fresh && provider === 'sqlite') return migrateNewSqlite(url.slice('file:'.length));
  if (provider === 'postgresql') return migratePostgres(url);
  await migrateWithCli(url, provider);
}
