// Opening the configured database says what would slow the engine down: on PostgreSQL, autovacuum off.
import { Writable } from 'node:stream';
import { openDatabase } from '../../src/db/open';
import { createLogger } from '../../src/lib/logger';
import { testConfig } from '../support/app';
import { createTestDatabase, provider, type TestDatabase } from '../support/databases';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

async function warningsOfOpening(): Promise<string[]> {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const db = await openDatabase(testConfig({ databaseUrl: database.url }), createLogger('warn', stream));
  await db.$disconnect();
  return lines.map((line) => JSON.parse(line).msg as string);
}

if (provider === 'postgresql') {
  it('warns exactly when the server has autovacuum off', async () => {
    const [{ autovacuum }] = await database.db.$queryRawUnsafe<{ autovacuum: string }[]>('SHOW autovacuum');
    const warnings = await warningsOfOpening();
    const said = warnings.filter((msg) => msg.includes('autovacuum'));
    expect(said).toEqual(autovacuum === 'off' ? ["PostgreSQL's autovacuum is off: the runs' tables are never analyzed nor cleaned, and runs slow down as they grow; set autovacuum = on"] : []);
  });
} else {
  it('says nothing of a migrated SQLite database', async () => {
    expect(await warningsOfOpening()).toEqual([]);
  });
}
