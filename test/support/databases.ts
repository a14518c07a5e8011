// Each test file gets its own database: a copy of a migrated SQLite template, or a PostgreSQL database
// created from a migrated template database when TEST_DATABASE_URL is set.
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createDb, type Db } from '../../src/db/client';

export const postgresUrl = process.env.TEST_DATABASE_URL || null;
export const provider = postgresUrl ? 'postgresql' : 'sqlite';
export const sqliteDir = path.join(tmpdir(), `flows-test-${process.env.FLOWS_TEST_RUN ?? 'local'}`);
export const sqliteTemplate = path.join(sqliteDir, 'template.db');

export function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.href;
}

export const templateName = (url: string) => `${new URL(url).pathname.slice(1)}_template`;

export async function adminQuery(sql: string): Promise<void> {
  const client = new Client({ connectionString: postgresUrl! });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  url: string;
  db: Db;
  drop(): Promise<void>;
}

async function open(url: string, remove: () => unknown): Promise<TestDatabase> {
  const db = await createDb(url);
  return {
    url,
    db,
    async drop() {
      await db.$disconnect();
      await remove();
    },
  };
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const suffix = randomBytes(6).toString('hex');
  if (postgresUrl) {
    const name = `${templateName(postgresUrl)}_${suffix}`;
    await adminQuery(`CREATE DATABASE "${name}" TEMPLATE "${templateName(postgresUrl)}"`);
    return open(withDatabase(postgresUrl, name), () => adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  }
  mkdirSync(sqliteDir, { recursive: true });
  const file = path.join(sqliteDir, `${suffix}.db`);
  copyFileSync(sqliteTemplate, file);
  return open(`file:${file}`, () => {
    for (const extra of ['', '-wal', '-shm']) rmSync(file + extra, { force: true });
  });
}
