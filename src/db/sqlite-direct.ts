// The embedded database's hot statements, run on the connection the Prisma client itself uses (its driver
// adapter's better-sqlite3 handle) instead of through the client: each statement is prepared once and kept.
// Through the client, every statement is planned by the query engine and prepared anew by the adapter,
// about 1 ms of CPU each; here it costs tens of microseconds.
//
// Group commit: the batches sent during one turn of the event loop are written together at its end, each in
// a savepoint of its own (all or nothing, as a batch is) inside one transaction, so that its commit, a sync
// of the write-ahead log to disk, is paid once for them all rather than once for each. A batch is answered
// only once that commit is done: nothing answered is lost to a crash.
//
// One connection serves both paths, so a group never runs inside a transaction of the client's: while one
// is open (between its awaits), the group waits for the adapter's transaction lock, as the client's own
// transactions do.
import type { Database, Statement } from 'better-sqlite3';
import type { SqlDriverAdapter, SqlDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { lruFor, type Lru } from '../lib/lru';

/** A statement as sql.ts hands it over: SQLite's text (placeholders `?`) and its parameters, bound as given. */
export interface DirectStatement {
  text: string;
  params: unknown[];
  /** `run` answers the count of rows it changed; `query` the rows. */
  kind: 'run' | 'query';
}

/** A database's direct path (this file for SQLite, pg-direct.ts for PostgreSQL). */
export interface SqlDirect {
  /** The statements' answers, run in order all or nothing; null when the connection is not open (use the client). */
  batch(statements: DirectStatement[]): Promise<unknown[]> | null;
}

interface Waiting {
  statements: DirectStatement[];
  resolve(answers: unknown[]): void;
  reject(err: unknown): void;
}

type Written = { answers: unknown[] } | { err: unknown };

/** Integers bound as SQLite integers: a JavaScript number is bound as a float (`3` would read `3.0` in text). */
const bound = (value: unknown) => (typeof value === 'number' && Number.isInteger(value) ? BigInt(value) : value);

/**
 * The adapter factory the client is given, which keeps what it connects: `direct` runs statements on that
 * connection. The adapter's handle is its public `client` property (better-sqlite3 `Database`).
 */
export function directSqlite(factory: SqlDriverAdapterFactory): { factory: SqlDriverAdapterFactory; direct: SqlDirect } {
  let adapter: (SqlDriverAdapter & { client: Database }) | null = null;
  /** The connection's prepared statements, and the group's write (better-sqlite3 begins, commits, and makes savepoints of nested ones). */
  let kept: { prepared: Lru<Statement>; group: (client: Database, waiting: Waiting[]) => Written[] } | null = null;
  let waiting: Waiting[] = [];

  const capturing: SqlDriverAdapterFactory = {
    provider: factory.provider,
    adapterName: factory.adapterName,
    async connect() {
      adapter = (await factory.connect()) as typeof adapter;
      const client = adapter!.client;
      const one = client.transaction(runAll);
      // Each batch its own savepoint: one that fails is rolled back alone, and answers its error.
      const group = client.transaction((db: Database, batches: Waiting[]): Written[] =>
        batches.map(({ statements }) => {
          try {
            return { answers: one(db, statements) };
          } catch (err) {
            return { err };
          }
        }),
      );
      kept = { prepared: lruFor<Statement>({ max: 500, maxWeight: 2_000_000, weigh: (text) => text.length }), group };
      return adapter!;
    },
  };

  const statementOf = (client: Database, text: string) =>
    kept!.prepared.get(text, () => {
      const statement = client.prepare(text);
      // Numbers as numbers: every integer the statements read (counts, attempts, lengths) is small.
      if (statement.reader) statement.safeIntegers(false);
      return statement;
    });

  function runAll(client: Database, statements: DirectStatement[]) {
    return statements.map(({ text, params, kind }) => {
      const statement = statementOf(client, text);
      const values = params.map(bound);
      return kind === 'query' && statement.reader ? statement.all(...values) : statement.run(...values).changes;
    });
  }

  const settle = (batches: Waiting[], written: Written[]) =>
    batches.forEach((batch, i) => {
      const outcome = written[i];
      if ('answers' in outcome) batch.resolve(outcome.answers);
      else batch.reject(outcome.err);
    });

  /** Writes the turn's batches in one transaction; each is answered after its commit. */
  async function flush() {
    const batches = waiting;
    waiting = [];
    const client = adapter?.client;
    try {
      if (!client?.open) throw new Error('The database connection is not open.');
      if (!client.inTransaction) return settle(batches, kept!.group(client, batches));
      // A transaction of the client's is open: take the adapter's lock, then write inside the transaction it begins.
      const transaction = await adapter!.startTransaction();
      try {
        const written = kept!.group(client, batches);
        client.prepare('COMMIT').run();
        settle(batches, written);
      } catch (err) {
        if (client.inTransaction) client.prepare('ROLLBACK').run();
        throw err;
      } finally {
        await transaction.commit();
      }
    } catch (err) {
      // The commit failed (a full disk, a busy database beyond its timeout): nothing of the group is written.
      for (const batch of batches) batch.reject(err);
    }
  }

  return {
    factory: capturing,
    direct: {
      batch(statements) {
        if (!adapter?.client.open) return null;
        return new Promise((resolve, reject) => {
          if (waiting.push({ statements, resolve, reject }) === 1) setImmediate(() => void flush());
        });
      },
    },
  };
}
