// Sender connections in the database, through the tenant-bound client. The token arrives sealed and leaves
// sealed: only the service opens it, to call the sender.
import type { Prisma } from '../../generated/prisma/sqlite/client';
import type { TenantDb } from '../db/tenant-scope';

type Fields = { name?: string; apiBaseUrl?: string; login?: string; tokenCiphertext?: string; account?: string | null };

export function createSendersRepo(db: TenantDb) {
  return {
    create: (data: { id: string; name: string; kind: string; apiBaseUrl: string; login: string | null; tokenCiphertext: string }) => db.senderConnection.create({ data: data as Prisma.SenderConnectionUncheckedCreateInput }),
    find: (id: string) => db.senderConnection.findFirst({ where: { id } }),
    list: () => db.senderConnection.findMany({ orderBy: { id: 'desc' } }),
    update: async (id: string, data: Fields) => ((await db.senderConnection.updateMany({ where: { id }, data })).count === 0 ? null : db.senderConnection.findFirst({ where: { id } })),
    delete: async (id: string) => (await db.senderConnection.deleteMany({ where: { id } })).count > 0,
    verified: (id: string, account: string) => db.senderConnection.updateMany({ where: { id }, data: { lastVerifiedAt: new Date(), account } }),
    /** The live jobs whose report names the connection. */
    usersOf: async (id: string) =>
      (await db.job.findMany({ where: { deletedAt: null }, select: { report: true } })).filter((job) => (job.report as { senderConnectionId?: string } | null)?.senderConnectionId === id).length,
  };
}

export type SenderConnectionRow = NonNullable<Awaited<ReturnType<ReturnType<typeof createSendersRepo>['find']>>>;
