// Picks the Prisma client for the database URL. Both generated clients come from the same models,
// so the SQLite client's type serves as the type of either.
import { PrismaBetterSQLite3 } from '@prisma/adapter-better-sqlite3';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient as PostgresClient } from '../../generated/prisma/postgresql/client';
import { PrismaClient as SqliteClient } from '../../generated/prisma/sqlite/client';
import { providerOf } from '../config';

export type Db = SqliteClient;
export type Tx = Omit<Db, '$connect' | '$disconnect' | '$on' | '$transaction' | '$extends'>;
export { Prisma } from '../../generated/prisma/sqlite/client';

export async function createDb(url: string): Promise<Db> {
  if (providerOf(url) === 'postgresql') {
    return new PostgresClient({ adapter: new PrismaPg({ connectionString: url }) }) as unknown as Db;
  }
  const db = new SqliteClient({ adapter: new PrismaBetterSQLite3({ url, timeout: 5000 }) });
  // WAL lets readers run beside the one writer; it persists in the file. Foreign keys are per connection.
  await db.$queryRawUnsafe('PRAGMA journal_mode = WAL');
  await db.$queryRawUnsafe('PRAGMA foreign_keys = ON');
  return db;
}
