// Process entry: config → database → app → listen; graceful shutdown on SIGTERM and SIGINT.
import { buildApp } from './app';
import { ConfigError, loadConfig, type Config } from './config';
import { createDb, type Db } from './db/client';
import { migrateDatabase, pendingMigrations } from './db/migrate';
import { createLogger, type Logger } from './lib/logger';

const SHUTDOWN_GRACE_MS = 10_000;

function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`Invalid configuration: ${err.message}`);
    process.exit(1);
  }
}

/** Opens the database, first applying pending migrations unless FLOWS_MIGRATE_ON_START=false. */
async function openDatabase(config: Config, logger: Logger): Promise<Db> {
  const db = await createDb(config.databaseUrl);
  const pending = await pendingMigrations(db, config.databaseProvider);
  if (pending.length === 0) return db;
  if (!config.migrateOnStart) {
    logger.warn({ pending }, 'the database lacks migrations; run npm run migrate');
    return db;
  }
  // The migration engine needs the database to itself (SQLite allows one writer).
  await db.$disconnect();
  logger.info({ provider: config.databaseProvider, pending }, 'applying database migrations');
  await migrateDatabase(config.databaseUrl);
  return createDb(config.databaseUrl);
}

async function main() {
  const config = configOrExit();
  const logger = createLogger(config.logLevel);
  const db = await openDatabase(config, logger);
  const { app } = await buildApp({ config, db, logger });

  const server = app.listen(config.port, config.host, () => {
    logger.info({ url: config.baseUrl.href, database: config.databaseProvider }, `Flows is listening on ${config.baseUrl.href}`);
  });

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS).unref();
    server.close(async () => {
      await db.$disconnect();
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err) => {
  console.error('Flows failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
