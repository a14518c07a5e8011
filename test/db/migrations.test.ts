// The migration history of the provider under test reaches the current models: a database built by
// the migrations has the same tables, columns, indexes and keys as one built straight from the schema.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import { migrateDatabase, migrationsOf } from '../../src/db/migrate';
import { projectRoot } from '../../src/lib/paths';
import { adminQuery, createTestDatabase, postgresUrl, provider, sqliteDir, templateName, withDatabase } from '../support/databases';

function schemaSql(): string {
  const cli = require.resolve('prisma/build/index.js', { paths: [projectRoot] });
  const url = postgresUrl ?? `file:${path.join(sqliteDir, 'unused.db')}`;
  return execFileSync(
    process.execPath,
    [cli, 'migrate', 'diff', '--from-empty', '--to-schema-datamodel', `prisma/${provider}/schema.prisma`, '--script', '--config', `prisma/${provider}/prisma.config.ts`],
    { cwd: projectRoot, env: { ...process.env, DATABASE_URL: url }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
  );
}

// SQLite keeps a table's statement as written, and ALTER TABLE ADD COLUMN splices the column in before the
// closing parenthesis: spaces around commas and parentheses are not the schema's.
const normalise = (sql: string | null) => (sql ?? '').replace(/\s+/g, ' ').replace(/ ?([,()]) ?/g, '$1').trim();

function sqliteCatalog(file: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND tbl_name != '_prisma_migrations'").all() as any[])
      .map((row) => `${row.type} ${row.name} ${row.tbl_name} ${normalise(row.sql)}`)
      .sort();
  } finally {
    db.close();
  }
}

async function postgresCatalog(url: string): Promise<string[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const columns = await client.query(
      `SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
       WHERE table_schema = 'public' AND table_name != '_prisma_migrations'`,
    );
    const indexes = await client.query(`SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename != '_prisma_migrations'`);
    const constraints = await client.query(
      `SELECT c.relname AS table_name, k.conname, pg_get_constraintdef(k.oid) AS def
       FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
       WHERE k.connamespace = 'public'::regnamespace AND c.relname != '_prisma_migrations'`,
    );
    return [
      ...columns.rows.map((r) => `column ${r.table_name}.${r.column_name} ${r.data_type} ${r.is_nullable} ${r.column_default}`),
      ...indexes.rows.map((r) => `index ${r.indexdef}`),
      ...constraints.rows.map((r) => `constraint ${r.table_name} ${r.conname} ${r.def}`),
    ].sort();
  } finally {
    await client.end();
  }
}

it(`the ${provider} migrations build exactly the current models`, async () => {
  const migrated = await createTestDatabase();
  await migrated.db.$disconnect();
  const sql = schemaSql();
  expect(sql).toMatch(/CREATE TABLE/);

  if (postgresUrl) {
    const name = `${templateName(postgresUrl)}_models`;
    await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await adminQuery(`CREATE DATABASE "${name}"`);
    const direct = new Client({ connectionString: withDatabase(postgresUrl, name) });
    await direct.connect();
    await direct.query(sql);
    await direct.end();
    try {
      expect(await postgresCatalog(migrated.url)).toEqual(await postgresCatalog(withDatabase(postgresUrl, name)));
    } finally {
      await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await migrated.drop();
    }
    return;
  }

  const file = path.join(sqliteDir, 'from-models.db');
  rmSync(file, { force: true });
  const direct = new Database(file);
  direct.exec(sql);
  direct.close();
  try {
    const catalog = sqliteCatalog(migrated.url.slice('file:'.length));
    expect(catalog.length).toBeGreaterThan(20);
    expect(catalog).toEqual(sqliteCatalog(file));
  } finally {
    rmSync(file, { force: true });
    await migrated.drop();
  }
});

(provider === 'sqlite' ? it : it.skip)('a new SQLite database is migrated in the process as Prisma\'s CLI would: the same tables, the same record, nothing pending for the CLI', async () => {
  const migrated = await createTestDatabase();
  await migrated.db.$disconnect();
  const file = path.join(sqliteDir, 'in-process.db');
  rmSync(file, { force: true });
  try {
    await migrateDatabase(`file:${file}`, { fresh: true });
    expect(sqliteCatalog(file)).toEqual(sqliteCatalog(migrated.url.slice('file:'.length)));
    const recorded = (at: string) => {
      const db = new Database(at, { readonly: true });
      try {
        return db.prepare('SELECT migration_name, checksum, logs, rolled_back_at, applied_steps_count, finished_at IS NOT NULL AS finished FROM _prisma_migrations ORDER BY migration_name').all();
      } finally {
        db.close();
      }
    };
    expect(recorded(file)).toEqual(recorded(migrated.url.slice('file:'.length)));
    expect(recorded(file)).toHaveLength(migrationsOf('sqlite').length);
    const cli = require.resolve('prisma/build/index.js', { paths: [projectRoot] });
    const deploy = execFileSync(process.execPath, [cli, 'migrate', 'deploy', '--config', 'prisma/sqlite/prisma.config.ts'], { cwd: projectRoot, env: { ...process.env, DATABASE_URL: `file:${file}` }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(deploy).toContain('No pending migrations to apply');
  } finally {
    rmSync(file, { force: true });
    await migrated.drop();
  }
});

(postgresUrl ? it : it.skip)('instances started together on a new PostgreSQL take turns: one migrates while the others wait, however long it takes', async () => {
  const name = `${templateName(postgresUrl!)}_turns`;
  const url = withDatabase(postgresUrl!, name);
  await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await adminQuery(`CREATE DATABASE "${name}"`);
  // Another instance's turn, held here.
  const other = new Client({ connectionString: url });
  await other.connect();
  try {
    await other.query("SELECT pg_advisory_lock(hashtext('flows.migrate'))");
    let done = 0;
    const starts = [migrateDatabase(url), migrateDatabase(url)].map((start) => start.then(() => done++));
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(done).toBe(0);
    expect((await other.query("SELECT to_regclass('_prisma_migrations') AS t")).rows[0].t).toBeNull();

    await other.query("SELECT pg_advisory_unlock(hashtext('flows.migrate'))");
    await Promise.all(starts);
    const applied = await other.query('SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL ORDER BY migration_name');
    expect(applied.rows.map((row) => row.migration_name)).toEqual(migrationsOf('postgresql'));
  } finally {
    await other.end();
    await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  }
}, 120_000);
