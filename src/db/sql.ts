// Hand-written SQL for the hot paths, where a statement the Prisma client builds costs several times the
// CPU of a raw one. Statements are written once with `?` placeholders and PostgreSQL casts (`?::jsonb`,
// `?::timestamp(3)`); on PostgreSQL the placeholders are numbered, on SQLite the casts are dropped. They
// are reached only through the tenant-bound client (tenant-scope.ts): each names the tenant in its
// `WHERE` or its values, and the tests prove another tenant's rows untouched. They run beside the client, on
// its own connection (SQLite, prepared once: sqlite-direct.ts) or pool (PostgreSQL: pg-direct.ts).
import { directOf, type Db } from './client';
import type { DirectStatement, SqlDirect } from './sqlite-direct';

export type Dialect = 'sqlite' | 'postgresql';

export const dialectOf = (db: Db): Dialect => ((db as unknown as { _activeProvider: string })._activeProvider === 'postgresql' ? 'postgresql' : 'sqlite');

/** A date as each database's column holds it: SQLite keeps the text it is given, and ranges compare text. */
export const dateParam = (dialect: Dialect, date: Date) => (dialect === 'postgresql' ? date.toISOString() : date.toISOString().replace('Z', '+00:00'));

const CAST = /::(jsonb|timestamp\(3\)|text|int|float8)/g;

function translate(dialect: Dialect, text: string): string {
  if (dialect === 'sqlite') return text.replace(CAST, '');
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

export type SqlParam = string | number | boolean | null | Date | { json: unknown };

/**
 * A statement on the direct path: run when awaited, or with others in one transaction by `batch`.
 * Integers it reads are numbers (through the client they are bigints).
 */
class DirectLazy<T> implements PromiseLike<T> {
  #done: Promise<T> | null = null;
  constructor(
    readonly statement: DirectStatement,
    private readonly direct: SqlDirect,
    /** The same statement through the client, when the direct connection is not open. */
    readonly viaClient: () => Promise<T>,
  ) {}
  #start(): Promise<T> {
    return (this.#done ??= (this.direct.batch([this.statement]) as Promise<[T]> | null)?.then(([answer]) => answer) ?? this.viaClient());
  }
  then<A = T, B = never>(fulfilled?: ((value: T) => A | PromiseLike<A>) | null, rejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    return this.#start().then(fulfilled, rejected);
  }
  catch<B = never>(rejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<T | B> {
    return this.#start().catch(rejected);
  }
}

export function createSql(db: Db) {
  const dialect = dialectOf(db);
  const direct = directOf(db);
  const texts = new Map<string, string>();
  const prepared = (text: string) => {
    let translated = texts.get(text);
    if (translated === undefined) texts.set(text, (translated = translate(dialect, text)));
    return translated;
  };
  const param = (value: SqlParam) =>
    value instanceof Date ? dateParam(dialect, value) : value !== null && typeof value === 'object' ? JSON.stringify(value.json) : typeof value === 'boolean' && dialect === 'sqlite' ? Number(value) : value;
  const viaClient = {
    run: (text: string, params: SqlParam[]) => db.$executeRawUnsafe(prepared(text), ...params.map(param)),
    query: <T>(text: string, params: SqlParam[]) => db.$queryRawUnsafe<T[]>(prepared(text), ...params.map(param)),
  };
  const lazy = <T>(kind: DirectStatement['kind'], text: string, params: SqlParam[]) =>
    new DirectLazy<T>({ text: prepared(text), params: params.map(param), kind }, direct!, () => viaClient[kind](text, params) as Promise<T>);
  return {
    dialect,
    /** A statement that changes rows: the count it changed (it may go in a `batch`). */
    run: (text: string, params: SqlParam[]): PromiseLike<number> => (direct ? lazy<number>('run', text, params) : viaClient.run(text, params)),
    /** A statement that answers rows (a select, or a write with RETURNING). */
    query: <T>(text: string, params: SqlParam[]): PromiseLike<T[]> => (direct ? lazy<T[]>('query', text, params) : viaClient.query<T>(text, params)),
    /** Statements run in order in one transaction, without a round trip to this process between them. */
    batch<T extends readonly unknown[]>(statements: [...{ [K in keyof T]: PromiseLike<T[K]> }]): Promise<T> {
      const lazies = statements as unknown as DirectLazy<unknown>[];
      const answered = direct && lazies.every((statement) => statement instanceof DirectLazy) ? direct.batch(lazies.map((statement) => statement.statement)) : null;
      if (answered) return answered as Promise<unknown> as Promise<T>;
      const clientCalls = direct ? lazies.map((statement) => statement.viaClient()) : statements;
      return db.$transaction(clientCalls as never) as unknown as Promise<T>;
    },
    /** `GREATEST` on PostgreSQL is `MAX` with two arguments on SQLite. */
    greatest: dialect === 'postgresql' ? 'GREATEST' : 'MAX',
  };
}

export type Sql = ReturnType<typeof createSql>;

/** Hand-written statements, one translator per client (its statements' texts are kept). */
const sqlOf = new WeakMap<Db, Sql>();

/** The client's hand-written statements: made once per client. */
export function sqlFor(db: Db): Sql {
  let sql = sqlOf.get(db);
  if (!sql) sqlOf.set(db, (sql = createSql(db)));
  return sql;
}
