// The embedded database's hot statements, run on the connection the Prisma client itself uses (its driver
// adapter's better-sqlite3 handle) instead of through the client: each statement is prepared once and kept,
// and a batch is one synchronous transaction. Through the client, every statement is planned by the query
// engine and prepared anew by the adapter, about 1 ms of CPU each; here it costs tens of microseconds.
// One connection serves both, so a batch never runs inside a transaction of the client's: while one is
// open, the batch waits for the adapter's transaction lock, as the client's own transactions do.
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

export interface SqliteDirect {
  /** The statements' answers, run in order in one transaction; null when the connection is not open (use the client). */
  batch(statements: DirectStatement[]): Promise<unknown[]> | null;
}

/** Integers bound as SQLite integers: a JavaScript number is bound as a float (`3` would read `3.0` in text). */
const bound = (value: unknown) => (typeof value === 'number' && Number.isInteger(value) ? BigInt(value) : value);

/**
 * The adapter factory the client is given, which keeps what it connects: `direct` runs statements on that
 * connection. The adapter's handle is its public `client` property (better-sqlite3 `Database`).
 */
export function directSqlite(factory: SqlDriverAdapterFactory): { factory: SqlDriverAdapterFactory; direct: SqliteDirect } {
  let adapter: (SqlDriverAdapter & { client: Database }) | null = null;
  /** The connection's prepared statements, and its transaction of a batch (better-sqlite3 begins, commits, rolls back). */
  let kept: { prepared: Lru<Statement>; inTransaction: (client: Database, statements: DirectStatement[]) => unknown[] } | null = null;
  const capturing: SqlDriverAdapterFactory = {
    provider: factory.provider,
    adapterName: factory.adapterName,
    async connect() {
      adapter = (await factory.connect()) as typeof adapter;
      kept = { prepared: lruFor<Statement>({ max: 500, maxWeight: 2_000_000, weigh: (text) => text.length }), inTransaction: adapter!.client.transaction(runAll) };
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

  return {
    factory: capturing,
    direct: {
      batch(statements) {
        const client = adapter?.client;
        if (!client?.open) return null;
        if (!client.inTransaction) {
          try {
            return Promise.resolve(kept!.inTransaction(client, statements));
          } catch (err) {
            return Promise.reject(err);
          }
        }
        // A transaction of the client's is open (between its awaits): wait for the adapter's lock, as its
        // next transaction would, then commit what runs inside the transaction that takes.
        return (async () => {
          const transaction = await adapter!.startTransaction();
          try {
            const answers = runAll(client, statements);
            client.prepare('COMMIT').run();
            return answers;
          } catch (err) {
            if (client.inTransaction) client.prepare('ROLLBACK').run();
            throw err;
          } finally {
            await transaction.commit();
          }
        })();
      },
    },
  };
}
