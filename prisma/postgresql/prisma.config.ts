// Prisma CLI config for PostgreSQL (migrations run through the JS schema engine, offline).
import path from 'node:path';
import { defineConfig } from 'prisma/config';
import { migrationAdapter } from './migration-adapter';

const url = process.env.DATABASE_URL;
if (!url || !/^postgres(ql)?:\/\//.test(url)) throw new Error('DATABASE_URL must be a postgres:// URL for this config');

export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  adapter: async () => migrationAdapter(url),
  schema: path.join(__dirname, 'schema.prisma'),
  migrations: { path: path.join(__dirname, 'migrations') },
});
