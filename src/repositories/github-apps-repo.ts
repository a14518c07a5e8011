// GitHub App connections in the database, through the tenant-bound client. The key and the webhook secret
// arrive sealed and leave sealed: only the service opens them, to sign or mint.
import type { Prisma } from '../../generated/prisma/sqlite/client';
import type { TenantDb } from '../db/tenant-scope';

type Fields = { name?: string; appId?: number; apiBaseUrl?: string; webBaseUrl?: string; privateKeyCiphertext?: string; webhookSecretCiphertext?: string | null };

export function createGithubAppsRepo(db: TenantDb) {
  return {
    create: (data: Required<Omit<Fields, 'webhookSecretCiphertext'>> & { id: string; webhookSecretCiphertext: string | null }) => db.githubApp.create({ data: data as Prisma.GithubAppUncheckedCreateInput }),
    find: (id: string) => db.githubApp.findFirst({ where: { id } }),
    list: () => db.githubApp.findMany({ orderBy: { id: 'desc' } }),
    update: async (id: string, data: Fields) => {
      const { count } = await db.githubApp.updateMany({ where: { id }, data });
      return count > 0 ? db.githubApp.findFirst({ where: { id } }) : null;
    },
    delete: async (id: string) => (await db.githubApp.deleteMany({ where: { id } })).count > 0,
    verified: (id: string) => db.githubApp.updateMany({ where: { id }, data: { lastVerifiedAt: new Date() } }),
    /** The live jobs whose workspace names the app. */
    usersOf: async (id: string) =>
      (await db.job.findMany({ where: { deletedAt: null }, select: { workspace: true } })).filter((job) => (job.workspace as { githubAppId?: string } | null)?.githubAppId === id).length,
  };
}

export type GithubAppRow = NonNullable<Awaited<ReturnType<ReturnType<typeof createGithubAppsRepo>['find']>>>;
