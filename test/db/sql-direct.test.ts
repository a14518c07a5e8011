// The hand-written statements (db/sql.ts) on each database: integers bound as integers, a batch all or
// nothing, and on SQLite the direct path on the client's own connection never inside a transaction of the
// client's (a batch sent while one is open waits for it, and is not rolled back with it).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { forTenant } from '../../src/db/tenant-scope';
import { directOf } from '../../src/db/client';
import { isUniqueViolation } from '../../src/db/errors';
import { newId } from '../../src/lib/ids';
import { createTestDatabase, provider, type TestDatabase } from '../support/databases';

let database: TestDatabase;
const tenantId = newId('ten');

beforeAll(async () => {
  database = await createTestDatabase();
  await database.db.tenant.create({ data: { id: tenantId, name: 'T' } });
});
afterAll(() => database.drop());

const sqlOf = () => forTenant(database.db, tenantId).$tenant().sql;
const budget = async () => (await database.db.tenant.findUniqueOrThrow({ where: { id: tenantId } })).monthlyBudgetUsd;

it('binds integers as integers and answers numbers', async () => {
  const [row] = await sqlOf().query<{ text: string; sum: unknown }>(`SELECT 'run:' || (? + 1) AS "text", ? + 2 AS "sum"`, [2, 5]);
  expect(row.text).toBe('run:3');
  expect(Number(row.sum)).toBe(7);
});

it('writes a batch all or nothing', async () => {
  const sql = sqlOf();
  const set = (usd: number) => sql.run('UPDATE "Tenant" SET "monthlyBudgetUsd" = ?::float8 WHERE "id" = ?', [usd, tenantId]);
  const refused = await sql.batch([set(10), sql.run('INSERT INTO "Tenant" ("id", "name") VALUES (?, ?)', [tenantId, 'again'])]).catch((err: unknown) => err);
  expect(isUniqueViolation(refused)).toBe(true);
  expect(await budget()).toBeNull();
  await sql.batch([set(10), set(12.5)]);
  expect(await budget()).toBe(12.5);
});

(provider === 'sqlite' ? describe : describe.skip)('on SQLite, the client\'s own connection', () => {
  it('runs the statements there, not through the client (which would answer a count as a bigint)', async () => {
    expect(directOf(database.db)).not.toBeNull();
    const [row] = await sqlOf().query<{ n: unknown }>('SELECT COUNT(*) AS "n" FROM "Tenant" WHERE "id" = ?', [tenantId]);
    expect(row.n).toBe(1);
  });

  it('writes the batches of one turn together, each all or nothing, each answered after the commit', async () => {
    const sql = sqlOf();
    const name = (value: string) => sql.run('UPDATE "Tenant" SET "name" = ? WHERE "id" = ?', [value, tenantId]);
    const usd = (value: number) => sql.run('UPDATE "Tenant" SET "monthlyBudgetUsd" = ?::float8 WHERE "id" = ?', [value, tenantId]);
    const duplicate = sql.run('INSERT INTO "Tenant" ("id", "name") VALUES (?, ?)', [tenantId, 'again']);
    const sent = [sql.batch([name('first')]), sql.batch([usd(1), duplicate]), sql.batch([usd(2)])];
    const settled = await Promise.allSettled(sent);
    expect(settled.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const row = await database.db.tenant.findUniqueOrThrow({ where: { id: tenantId } });
    expect([row.name, row.monthlyBudgetUsd]).toEqual(['first', 2]);
    await sql.run('UPDATE "Tenant" SET "name" = ? WHERE "id" = ?', ['T', tenantId]);
  });

  it('waits for a transaction of the client\'s, and is not rolled back with it', async () => {
    const sql = sqlOf();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let opened!: () => void;
    const open = new Promise<void>((resolve) => (opened = resolve));
    // The client's interactive transaction writes, waits (open across an await), then fails: it is rolled back.
    const failing = database.db
      .$transaction(async (tx) => {
        await tx.tenant.update({ where: { id: tenantId }, data: { name: 'inside' } });
        opened();
        await held;
        throw new Error('rolled back');
      })
      .catch((err: Error) => err.message);
    await open;
    const order: string[] = [];
    const batch = sql.batch([sql.run('UPDATE "Tenant" SET "monthlyBudgetUsd" = ?::float8 WHERE "id" = ?', [99, tenantId])]).then(() => order.push('batch'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    order.push('released');
    release();
    expect(await failing).toBe('rolled back');
    await batch;
    expect(order).toEqual(['released', 'batch']);
    const row = await database.db.tenant.findUniqueOrThrow({ where: { id: tenantId } });
    expect([row.name, row.monthlyBudgetUsd]).toEqual(['T', 99]);
  });
});

(provider === 'postgresql' ? describe : describe.skip)("on PostgreSQL, the client's own pool", () => {
  it('runs the statements there, reading counts and sums as numbers (the client would answer bigints)', async () => {
    expect(directOf(database.db)).not.toBeNull();
    const [row] = await sqlOf().query<{ n: unknown; total: unknown }>('SELECT COUNT(*) AS "n", SUM(1.5::numeric) AS "total" FROM "Tenant" WHERE "id" = ?', [tenantId]);
    expect(row).toEqual({ n: 1, total: 1.5 });
  });

  it('reads a timestamp as the UTC instant the client wrote, whatever the time zone of the process', async () => {
    const written = (await database.db.tenant.findUniqueOrThrow({ where: { id: tenantId } })).createdAt;
    // A process of its own: the time zone is read when a process starts.
    const read = `
      const { createDb } = require('./src/db/client.ts');
      const { forTenant } = require('./src/db/tenant-scope.ts');
      createDb(process.env.URL).then(async (db) => {
        await db.$connect();
        const [row] = await forTenant(db, process.env.TENANT).$tenant().sql.query('SELECT "createdAt" AS "at" FROM "Tenant" WHERE "id" = ?', [process.env.TENANT]);
        console.log(row.at.toISOString());
        await db.$disconnect();
      });`;
    const { stdout } = await promisify(execFile)(process.execPath, ['-r', './test/support/register-ts.js', '-e', read], { env: { ...process.env, TZ: 'America/New_York', URL: database.url, TENANT: tenantId } });
    expect(stdout.trim()).toBe(written.toISOString());
  });

  it('gives a connection back usable after a batch that failed', async () => {
    const sql = sqlOf();
    for (let i = 0; i < 12; i++) {
      const failed = await sql.batch([sql.run('UPDATE "Tenant" SET "name" = ? WHERE "id" = ?', ['x', tenantId]), sql.run('SELECT 1 / 0', [])]).catch((err: { code?: string }) => err.code);
      expect(failed).toBe('22012'); // division by zero, more times than the pool has connections
    }
    const [row] = await sql.query<{ name: string }>('SELECT "name" FROM "Tenant" WHERE "id" = ?', [tenantId]);
    expect(row.name).toBe('T');
  });

  it("prepares each statement with parameters once per connection, the client's and the hand-written ones", async () => {
    const namesOf = (rows: { name: string }[]) => rows.map((row) => row.name);
    // An interactive transaction holds one connection: what the client ran there is prepared, under a name.
    const client = await database.db.$transaction(async (tx) => {
      for (let i = 0; i < 2; i++) await tx.tenant.findUnique({ where: { id: tenantId } });
      return tx.$queryRawUnsafe<{ name: string }[]>(`SELECT "name" FROM pg_prepared_statements WHERE "statement" LIKE '%FROM "public"."Tenant" WHERE%'`);
    });
    expect(namesOf(client)).toContainEqual(expect.stringMatching(/^flows_\d+$/));
    // So is a hand-written one, on the connection of its batch.
    const sql = sqlOf();
    const [, direct] = await sql.batch([
      sql.query('SELECT "name" AS "found" FROM "Tenant" WHERE "id" = ?', [tenantId]),
      sql.query<{ name: string }>('SELECT "name" FROM pg_prepared_statements WHERE "statement" LIKE ?', ['%AS "found" FROM "Tenant"%']),
    ]);
    expect(namesOf(direct)).toEqual([expect.stringMatching(/^flows_\d+$/)]);
  });
});
