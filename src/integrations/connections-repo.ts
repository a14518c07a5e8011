// VM-host connections and the agent integration in the database, through the tenant-bound client.
// Their secrets arrive sealed and leave sealed: only a driver call opens them.
import type { Prisma } from '../../generated/prisma/sqlite/client';
import type { TenantDb } from '../db/tenant-scope';

export function createConnectionsRepo(db: TenantDb) {
  return {
    create: (data: { id: string; name: string; apiBaseUrl: string; tokenCiphertext: string }) => db.vmhostConnection.create({ data: data as Prisma.VmhostConnectionUncheckedCreateInput }),
    find: (id: string) => db.vmhostConnection.findFirst({ where: { id } }),
    list: () => db.vmhostConnection.findMany({ orderBy: { id: 'desc' } }),
    update: async (id: string, data: { name?: string; apiBaseUrl?: string; tokenCiphertext?: string }) => {
      const { count } = await db.vmhostConnection.updateMany({ where: { id }, data });
      return count > 0 ? db.vmhostConnection.findFirst({ where: { id } }) : null;
    },
    delete: async (id: string) => (await db.vmhostConnection.deleteMany({ where: { id } })).count > 0,
    /** What still names the connection: execution targets and the agent integration. */
    usersOf: async (id: string) => (await db.executionTarget.count({ where: { connectionId: id } })) + (await db.agentIntegration.count({ where: { connectionId: id } })),

    findIntegration: () => db.agentIntegration.findFirst({}),
    saveIntegration: (data: { project: string; connectionId: string | null; apiBaseUrl: string; tokenCiphertext: string }, id: string) =>
      db.$transaction(async (tx) => {
        const existing = await tx.agentIntegration.findFirst({});
        if (existing) {
          await tx.agentIntegration.updateMany({ where: { id: existing.id }, data });
          return tx.agentIntegration.findFirstOrThrow({ where: { id: existing.id } });
        }
        return tx.agentIntegration.create({ data: { id, ...data } as Prisma.AgentIntegrationUncheckedCreateInput });
      }),
    deleteIntegration: async () => (await db.agentIntegration.deleteMany({})).count > 0,
  };
}

export type ConnectionRow = NonNullable<Awaited<ReturnType<ReturnType<typeof createConnectionsRepo>['find']>>>;
export type IntegrationRow = NonNullable<Awaited<ReturnType<ReturnType<typeof createConnectionsRepo>['findIntegration']>>>;
