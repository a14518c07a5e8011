// Execution targets of a tenant in the database, through the tenant-bound client.
import type { Prisma } from '../../generated/prisma/sqlite/client';
import type { TenantDb } from '../db/tenant-scope';
import type { KeysetRequest } from '../http/pagination';

type TargetFields = {
  name?: string;
  connectionId?: string;
  image?: string;
  size?: string;
  region?: string | null;
  timeoutSeconds?: number;
  command?: string | null;
  cpus?: number;
  memoryMb?: number;
  pids?: number;
  network?: string;
};

export function createTargetsRepo(db: TenantDb) {
  return {
    create: (data: TargetFields & { id: string; name: string; kind: string }) => db.executionTarget.create({ data: data as Prisma.ExecutionTargetUncheckedCreateInput }),
    update: async (id: string, data: TargetFields) => ((await db.executionTarget.updateMany({ where: { id }, data })).count > 0 ? db.executionTarget.findFirst({ where: { id } }) : null),
    delete: async (id: string) => (await db.executionTarget.deleteMany({ where: { id } })).count > 0,
    jobsUsing: (id: string) => db.job.count({ where: { executionTargetId: id, deletedAt: null } }),
    find: (id: string) => db.executionTarget.findFirst({ where: { id } }),
    list: ({ limit, after }: KeysetRequest<string>) =>
      db.executionTarget.findMany({ where: { id: after === undefined ? undefined : { lt: after } }, orderBy: { id: 'desc' }, take: limit + 1 }),
  };
}

export type TargetRow = NonNullable<Awaited<ReturnType<ReturnType<typeof createTargetsRepo>['find']>>>;
