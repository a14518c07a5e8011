// Picks the Prisma client for the database URL. Both generated clients come from the same models,
// so the SQLite client's type serves as the type of either. Each provider's client and driver adapter
// is loaded only when used: an embedded install never loads PostgreSQL's, and the reverse.
import type { PrismaClient as SqliteClient } from '../../generated/prisma/sqlite/client';
import { providerOf } from '../config';
import { directSqlite, type SqliteDirect } from './sqlite-direct';

export type Db = SqliteClient;
export type Tx = Omit<Db, '$connect' | '$disconnect' | '$on' | '$transaction' | '$extends'>;
export type { Prisma } from '../../generated/prisma/sqlite/client';

const directs = new WeakMap<Db, SqliteDirect>();

/** The embedded database's direct path to the client's own connection (sqlite-direct.ts); null on PostgreSQL. */
export const directOf = (db: Db): SqliteDirect | null => directs.get(db) ?? null;

export async function createDb(url: string): Promise<Db> {
  if (providerOf(url) === 'postgresql') {
    const { PrismaClient } = require('../../generated/prisma/postgresql/client') as typeof import('../../generated/prisma/postgresql/client');
    const { PrismaPg } = require('@prisma/adapter-pg') as typeof import('@prisma/adapter-pg');
    return new PrismaClient({ adapter: new PrismaPg({ connectionString: url }) }) as unknown as Db;
  }
  const { PrismaClient } = require('../../generated/prisma/sqlite/client') as typeof import('../../generated/prisma/sqlite/client');
  const { PrismaBetterSQLite3 } = require('@prisma/adapter-better-sqlite3') as typeof import('@prisma/adapter-better-sqlite3');
  const { factory, direct } = directSqlite(new PrismaBetterSQLite3({ url, timeout: 5000 }));
  const db = new PrismaClient({ adapter: factory });
  directs.set(db, direct);
  // WAL lets readers run beside the one writer; it persists in the file. Foreign keys are per connection.
  await db.$queryRawUnsafe('PRAGMA journal_mode = WAL');
  await db.$queryRawUnsafe('PRAGMA foreign_keys = ON');
  return db;
}
