// PostgreSQL's hot statements, run on the connection pool the Prisma client itself uses (its driver adapter's
// `pg` pool) instead of through the client. Through the client, every raw statement is handed to the query
// engine, which describes its parameters and maps every value of its answer, about 1 ms of CPU each; here
// node-postgres sends it as it is. A batch takes one connection of the pool for its transaction (as the
// client's own batch transactions do); a single statement commits alone. Every statement with parameters
// sent on that pool, the client's own included, is a named prepared statement: PostgreSQL parses and plans
// its text once per connection instead of at every run (a few hundred microseconds of its CPU each time
// here, several times what running a hot statement costs).
import type { Pool, PoolClient } from 'pg';
import type { SqlDriverAdapter, SqlDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type { DirectStatement, SqlDirect } from './sqlite-direct';

/** A `timestamp(3)` (without time zone) holds UTC: read it as such, whatever the process's time zone. */
const utc = (text: string) => new Date(`${text.replace(' ', 'T')}Z`);

/**
 * How answers are read where they differ from node-postgres's defaults, as through the client: counts and
 * sums as numbers (node-postgres reads `bigint` and `numeric` as text), timestamps as UTC dates.
 */
const PARSERS: Record<number, (text: string) => unknown> = { 20: Number, 1700: Number, 1114: utc };

/**
 * Texts past this many are sent unnamed: a statement of a list's length (`IN (?, ?, …)`) makes a text per
 * length, and each name costs every connection a plan it keeps.
 */
const MAX_NAMED = 500;

/**
 * The adapter factory the client is given, which keeps what it connects: `direct` runs statements on that
 * adapter's pool. The adapter's pool is its public `client` property (a `pg` Pool).
 */
export function directPg(factory: SqlDriverAdapterFactory): { factory: SqlDriverAdapterFactory; direct: SqlDirect } {
  let pool: Pool | null = null;
  const { types } = require('pg') as typeof import('pg');
  const parsing = { getTypeParser: (oid: number, format?: 'text' | 'binary') => PARSERS[oid] ?? types.getTypeParser(oid, format as 'text') };
  const names = new Map<string, string>();
  const nameOf = (text: string) => {
    let name = names.get(text);
    if (name === undefined && names.size < MAX_NAMED) names.set(text, (name = `flows_${names.size + 1}`));
    return name;
  };
  /** Has the connection send each statement with parameters, and no name of its own, under its text's name. */
  const naming = (connection: PoolClient) => {
    const query = connection.query.bind(connection) as (...args: unknown[]) => unknown;
    connection.query = ((config: unknown, ...rest: unknown[]) => {
      const statement = config as { text?: unknown; name?: string; values?: unknown[]; submit?: unknown } | null;
      const plain = typeof statement?.text === 'string' && statement.values?.length && !statement.name && !statement.submit;
      const name = plain ? nameOf(statement.text as string) : undefined;
      return query(name ? { ...statement, name } : config, ...rest);
    }) as never;
  };

  const capturing: SqlDriverAdapterFactory = {
    provider: factory.provider,
    adapterName: factory.adapterName,
    async connect() {
      const adapter = (await factory.connect()) as SqlDriverAdapter & { client: Pool };
      pool = adapter.client;
      pool.on('connect', naming);
      return adapter;
    },
  };

  async function one(on: Pool | PoolClient, { text, params, kind }: DirectStatement) {
    const answer = await on.query({ text, values: params, types: parsing as never });
    return kind === 'query' ? answer.rows : (answer.rowCount ?? 0);
  }

  async function inTransaction(on: Pool, statements: DirectStatement[]) {
    const connection = await on.connect();
    let broken: Error | undefined;
    // A connection lost while it is held says so as an event: without a listener, the process would end.
    const lost = (err: Error) => (broken = err);
    connection.on('error', lost);
    try {
      await connection.query('BEGIN');
      const answers: unknown[] = [];
      for (const statement of statements) answers.push(await one(connection, statement));
      await connection.query('COMMIT');
      return answers;
    } catch (err) {
      // A connection the rollback cannot use is not given back to the pool.
      await connection.query('ROLLBACK').catch((failed: Error) => (broken = failed));
      throw err;
    } finally {
      connection.removeListener('error', lost);
      connection.release(broken);
    }
  }

  return {
    factory: capturing,
    direct: {
      batch(statements) {
        if (!pool || pool.ended) return null;
        return statements.length === 1 ? one(pool, statements[0]).then((answer) => [answer]) : inTransaction(pool, statements);
      },
    },
  };
}
