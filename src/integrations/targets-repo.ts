// Execution targets of a tenant in the database, through the tenant-bound client.
import type { TenantDb } from '../db/tenant-scope';
import type { KeysetRequest } from '../http/pagination';

export function createTargetsRepo(db: TenantDb) {
  return {
    find: (id: string) => db.executionTarget.findFirst({ where: { id } }),
    list: ({ limit, after }: KeysetRequest<string>) =>
      db.executionTarget.findMany({ where: { id: after === undefined ? undefined : { lt: after } }, orderBy: { id: 'desc' }, take: limit + 1 }),
  };
}

export type TargetRow = NonNullable<Awaited<ReturnType<ReturnType<typeof createTargetsRepo>['find']>>>;
