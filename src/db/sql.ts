// Hand-written SQL for the hot paths, where a statement the Prisma client builds costs several times the
// CPU of a raw one. Statements are written once with `?` placeholders and PostgreSQL casts (`?::jsonb`,
// `?::timestamp(3)`); on PostgreSQL the placeholders are numbered, on SQLite the casts are dropped. They
// are reached only through the tenant-bound client (tenant-scope.ts): each names the tenant in its
// `WHERE` or its values, and the tests prove another tenant's rows untouched.
import type { Db } from './client';

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

export function createSql(db: Db) {
  const dialect = dialectOf(db);
  const texts = new Map<string, string>();
  const prepared = (text: string) => {
    let translated = texts.get(text);
    if (translated === undefined) texts.set(text, (translated = translate(dialect, text)));
    return translated;
  };
  const param = (value: SqlParam) =>
    value instanceof Date ? dateParam(dialect, value) : value !== null && typeof value === 'object' ? JSON.stringify(value.json) : typeof value === 'boolean' && dialect === 'sqlite' ? Number(value) : value;
  return {
    dialect,
    /** A statement that changes rows: the count it changed (a PrismaPromise: it may go in a `$transaction` batch). */
    run: (text: string, params: SqlParam[]) => db.$executeRawUnsafe(prepared(text), ...params.map(param)),
    /** A statement that answers rows (a select, or a write with RETURNING). */
    query: <T>(text: string, params: SqlParam[]) => db.$queryRawUnsafe<T[]>(prepared(text), ...params.map(param)),
    /** Statements run in order in one transaction, without a round trip to this process between them. */
    batch: <T extends readonly unknown[]>(statements: [...{ [K in keyof T]: Promise<T[K]> }]) => db.$transaction(statements as never) as unknown as Promise<T>,
    /** `GREATEST` on PostgreSQL is `MAX` with two arguments on SQLite. */
    greatest: dialect === 'postgresql' ? 'GREATEST' : 'MAX',
  };
}

export type Sql = ReturnType<typeof createSql>;
