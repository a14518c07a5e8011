// One plain multi-row INSERT, for a hot path where the client's per-row cost counts: a row through
// `createMany` costs about 0.5 ms of CPU here, a row of this statement about 0.1 ms. Reached only through
// the tenant-bound client (tenant-scope.ts), which stamps every row with its tenant.
import type { Sql } from './sql';

/** A column value: JSON columns take `{ json }`, date columns a Date. */
export type Cell = string | number | null | Date | { json: unknown };

export async function insertRows(sql: Sql, table: string, rows: Record<string, Cell>[]): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]);
  const placeholder = (cell: Cell) => (cell instanceof Date ? '?::timestamp(3)' : cell !== null && typeof cell === 'object' ? '?::jsonb' : '?');
  const tuples = rows.map((row) => `(${columns.map((column) => placeholder(row[column] ?? null)).join(', ')})`);
  const params = rows.flatMap((row) => columns.map((column) => row[column] ?? null));
  await sql.run(`INSERT INTO "${table}" (${columns.map((column) => `"${column}"`).join(', ')}) VALUES ${tuples.join(', ')}`, params);
}
