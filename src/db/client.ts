// Picks the Prisma client for the database URL. Both generated clients come from the same models,
// so the SQLite client's type serves as the type of either. Each provider's client and driver adapter
// is loaded only when used: an embedded install never loads PostgreSQL's, and the reverse.
import type { PrismaClient as SqliteClient } from '../../generated/prisma/sqlite/client';
import { providerOf } from '../config';
import { directPg } from './pg-direct';
import { directSqlite, type SqlDirect } from './sqlite-direct';

export type Db = SqliteClient;
export type Tx = Omit<Db, '$connect' | '$disconnect' | '$on' | '$transaction' | '$extends'>;
export type { Prisma } from '../../generated/prisma/sqlite/client';

const directs = new WeakMap<Db, SqlDirect>();

/** The direct path to the client's own connection (sqlite-direct.ts) or pool (pg-direct.ts) for hand-written statements. */
export const directOf = (db: Db): SqlDirect | null => directs.get(db) ?? null;

export async function createDb(url: string): Promise<Db> {
  if (providerOf(url) === 'postgresql') {
    const { PrismaClient } = require('../../generated/prisma/postgresql/client') as typeof import('../../generated/prisma/postgresql/client');
    const { PrismaPg } = require('@prisma/adapter-pg') as typeof import('@prisma/adapter-pg');
    const { factory, direct } = directPg(new PrismaPg({ connectionString: url }));
    const db = new PrismaClient({ adapter: factory }) as unknown as Db;
    directs.set(db, direct);
    return db;
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
