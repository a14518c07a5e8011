// Opens the configured database, first applying pending migrations unless FLOWS_MIGRATE_ON_START=false.
import type { Config } from '../config';
import type { Logger } from '../lib/logger';
import { createDb, type Db } from './client';
import { migrateDatabase, migrationsOf, pendingMigrations } from './migrate';

export async function openDatabase(config: Config, logger: Logger): Promise<Db> {
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

