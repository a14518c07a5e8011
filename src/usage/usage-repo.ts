// The tenant's runs' usage summed in the database, per job or per UTC day, in one statement: the JSON
// fields are read where the rows are (json_extract on SQLite, ->> on PostgreSQL), so a window of many runs
// costs one aggregate over the (tenantId, createdAt) index and answers one row per group.
import type { Dialect } from '../db/sql';
import type { TenantDb } from '../db/tenant-scope';
import type { UsageGrouping, UsageRow } from './usage-fns';

const NUMBERS = ['inputTokens', 'outputTokens', 'cachedTokens', 'turns'] as const;

/** The SQL of each dialect that reads a field of a run's `usage`, and tells a run that has it. */
const JSON_READS: Record<Dialect, { integer: (field: string) => string; cost: string; hasUsage: string; day: string }> = {
  sqlite: {
    integer: (field) => `json_extract(r."usage", '$.${field}')`,
    cost: `json_extract(r."usage", '$.costUsd')`,
    hasUsage: `json_type(r."usage") = 'object'`,
    day: `strftime('%Y-%m-%d', r."createdAt")`,
  },
  postgresql: {
    integer: (field) => `(r."usage"->>'${field}')::bigint`,
    cost: `(r."usage"->>'costUsd')::double precision`,
    hasUsage: `jsonb_typeof(r."usage") = 'object'`,
    // "createdAt" is a timestamp without time zone holding UTC.
    day: `to_char(r."createdAt", 'YYYY-MM-DD')`,
  },
};

export function createUsageRepo(db: TenantDb) {
  const { id: tenantId, sql } = db.$tenant();
  const reads = JSON_READS[sql.dialect];

  return {
    /** The tenant's own monthly budget; null: the operator's default applies. */
    async ownBudget(): Promise<number | null> {
      const [row] = await sql.query<{ budget: unknown }>('SELECT "monthlyBudgetUsd" AS "budget" FROM "Tenant" WHERE "id" = ?', [tenantId]);
      return row?.budget === null || row?.budget === undefined ? null : Number(row.budget);
    },

    setOwnBudget: (monthlyUsd: number | null) => sql.run('UPDATE "Tenant" SET "monthlyBudgetUsd" = ?::float8 WHERE "id" = ?', [monthlyUsd, tenantId]),

    /** The sums of the runs created in `[since, until)` that have usage, one row per job or per day. */
    async sums(since: Date, until: Date, groupBy: UsageGrouping): Promise<UsageRow[]> {
      const byJob = groupBy === 'job';
      const sums = NUMBERS.map((field) => `SUM(${reads.integer(field)}) AS "${field}"`).join(', ');
      return sql.query<UsageRow>(
        `SELECT ${byJob ? 'r."jobId"' : reads.day} AS "key", ${byJob ? 'j."slug"' : 'NULL'} AS "jobSlug", COUNT(*) AS "runs", ${sums}, ` +
          `SUM(${reads.cost}) AS "costUsd", SUM(CASE WHEN ${reads.cost} IS NULL THEN 1 ELSE 0 END) AS "unknownCostRuns" ` +
          `FROM "Run" r${byJob ? ' JOIN "Job" j ON j."tenantId" = r."tenantId" AND j."id" = r."jobId"' : ''} ` +
          `WHERE r."tenantId" = ? AND r."createdAt" >= ?::timestamp(3) AND r."createdAt" < ?::timestamp(3) AND ${reads.hasUsage} ` +
          `GROUP BY ${byJob ? 'r."jobId", j."slug"' : '1'}`,
        [tenantId, since, until],
      );
    },
  };
}

export type UsageRepo = ReturnType<typeof createUsageRepo>;
