// Prisma CLI config for the embedded SQLite database (migrations run through the JS schema engine, offline).
import path from 'node:path';
import { PrismaBetterSQLite3 } from '@prisma/adapter-better-sqlite3';
import { defineConfig } from 'prisma/config';

const url = process.env.DATABASE_URL?.startsWith('file:') ? process.env.DATABASE_URL : 'file:./data/flows.db';

export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  adapter: async () => new PrismaBetterSQLite3({ url }),
  schema: path.join(__dirname, 'schema.prisma'),
  migrations: { path: path.join(__dirname, 'migrations') },
});
