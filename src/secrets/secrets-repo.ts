// Secrets for runs in the database, through the tenant-bound client. Values arrive sealed and leave
// sealed: only the runner opens them, for the run that needs them.
import type { TenantDb } from '../db/tenant-scope';

const metadata = { name: true, createdAt: true, updatedAt: true } as const;

export function createSecretsRepo(db: TenantDb) {
  return {
    list: () => db.secret.findMany({ orderBy: { name: 'asc' }, select: metadata }),
    find: (name: string) => db.secret.findFirst({ where: { name }, select: metadata }),
    count: () => db.secret.count(),
    create: (data: { id: string; name: string; valueCiphertext: string }) => db.secret.create({ data: data as never, select: metadata }),
    /** The secret with its new value, or null when there is none of that name. */
    setValue: async (name: string, valueCiphertext: string) => {
      const { count } = await db.secret.updateMany({ where: { name }, data: { valueCiphertext } });
      return count > 0 ? db.secret.findFirst({ where: { name }, select: metadata }) : null;
    },
    delete: async (name: string) => (await db.secret.deleteMany({ where: { name } })).count > 0,
    /** The sealed values of the secrets named, those that exist. */
    sealed: (names: string[]) => db.secret.findMany({ where: { name: { in: names } }, select: { name: true, valueCiphertext: true } }),
  };
}

export type SecretRow = NonNullable<Awaited<ReturnType<ReturnType<typeof createSecretsRepo>['find']>>>;
