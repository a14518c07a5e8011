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
    /** A new webhook secret is the one the sources bound to the app verify with, from the same moment. */
    update: (id: string, data: Fields) =>
      db.$transaction(async (tx) => {
        const { count } = await tx.githubApp.updateMany({ where: { id }, data });
        if (count === 0) return null;
        if (data.webhookSecretCiphertext) await tx.webhookSource.updateMany({ where: { githubAppId: id, deletedAt: null }, data: { secretCiphertext: data.webhookSecretCiphertext } });
        return tx.githubApp.findFirst({ where: { id } });
      }),
    delete: async (id: string) => (await db.githubApp.deleteMany({ where: { id } })).count > 0,
    verified: (id: string) => db.githubApp.updateMany({ where: { id }, data: { lastVerifiedAt: new Date() } }),
    /** The live jobs whose workspace or report names the app. */
    usersOf: async (id: string) =>
      (await db.job.findMany({ where: { deletedAt: null }, select: { workspace: true, report: true } })).filter((job) => [job.workspace, job.report].some((settings) => (settings as { githubAppId?: string } | null)?.githubAppId === id)).length,
    /** The live webhook sources bound to the app. */
    sourcesOf: (id: string) => db.webhookSource.count({ where: { githubAppId: id, deletedAt: null } }),
  };
}

export type GithubAppRow = NonNullable<Awaited<ReturnType<ReturnType<typeof createGithubAppsRepo>['find']>>>;
