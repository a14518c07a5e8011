// Opens the configured database, first applying pending migrations unless FLOWS_MIGRATE_ON_START=false.
import type { Config } from '../config';
import type { Logger } from '../lib/logger';
import { createDb, type Db } from './client';
import { migrateDatabase, migrationsOf, pendingMigrations } from './migrate';

export async function openDatabase(config: Config, logger: Logger): Promise<Db> {
  const db = await migrated(config, logger);
  if (config.databaseProvider === 'postgresql') await reportAutovacuum(db, logger);
  return db;
}

/**
 * Says when PostgreSQL's autovacuum is off: the runs' tables are then never analyzed nor cleaned of the row
 * versions each move of a run leaves, and their statements slow as they grow (a burst's runs finished at
 * half the rate, docs/performance.md). The server's operator sets it: `autovacuum = on` is the default.
 */
async function reportAutovacuum(db: Db, logger: Logger) {
  const [{ autovacuum }] = await db.$queryRawUnsafe<{ autovacuum: string }[]>("SELECT current_setting('autovacuum') AS autovacuum");
  if (autovacuum === 'off') logger.warn("PostgreSQL's autovacuum is off: the runs' tables are never analyzed nor cleaned, and runs slow down as they grow; set autovacuum = on");
}

async function migrated(config: Config, logger: Logger): Promise<Db> {
  const db = await createDb(config.databaseUrl);
  const pending = await pendingMigrations((sql) => db.$queryRawUnsafe(sql), config.databaseProvider);
  if (pending.length === 0) return db;
  if (!config.migrateOnStart) {
    logger.warn({ pending }, 'the database lacks migrations; run npm run migrate');
    return db;
  }
  // The migration engine needs the database to itself (SQLite allows one writer).
  await db.$disconnect();
  logger.info({ provider: config.databaseProvider, pending }, 'applying database migrations');
  await migrateDatabase(config.databaseUrl, { fresh: pending.length === migrationsOf(config.databaseProvider).length });
  return createDb(config.databaseUrl);
}

