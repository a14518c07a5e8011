// The rules of a tenant's secrets for runs: names unique in the tenant, at most 100, values sealed at once
// and never answered. Jobs ask which names are missing when they are saved; the runner opens the values a
// run needs when it starts it.
import type { components } from '../../generated/openapi';
import { isUniqueViolation } from '../db/errors';
import type { TenantDb } from '../db/tenant-scope';
import { Conflict, NotFound } from '../lib/errors';
import { newId } from '../lib/ids';
import type { SecretBox } from '../lib/secrets';
import { createSecretsRepo, type SecretRow } from './secrets-repo';

type SecretView = components['schemas']['Secret'];

export const MAX_SECRETS = 100;

const secretNotFound = () => new NotFound('No such secret.');
const secretExists = (name: string) => new Conflict('secret_exists', `The tenant already has a secret named ${name}; set its value with PUT /api/v1/secrets/${name}.`);

const view = (row: SecretRow): SecretView => ({ name: row.name, createdAt: row.createdAt.toISOString(), updatedAt: row.updatedAt.toISOString() });

export function createSecretsService({ box }: { box: SecretBox }) {
  async function create(db: TenantDb, name: string, value: string): Promise<SecretView> {
    const repo = createSecretsRepo(db);
    if ((await repo.count()) >= MAX_SECRETS) throw new Conflict('conflict', `A tenant holds at most ${MAX_SECRETS} secrets; delete one first.`);
    try {
      return view(await repo.create({ id: newId('sec'), name, valueCiphertext: box.seal(value) }));
    } catch (err) {
      if (isUniqueViolation(err)) throw secretExists(name);
      throw err;
    }
  }

  return {
    list: async (db: TenantDb): Promise<SecretView[]> => (await createSecretsRepo(db).list()).map(view),

    async get(db: TenantDb, name: string): Promise<SecretView> {
      const row = await createSecretsRepo(db).find(name);
      if (!row) throw secretNotFound();
      return view(row);
    },

    create,

    /** Replaces the value of the secret, or creates it; `created` says which. */
    async put(db: TenantDb, name: string, value: string): Promise<{ created: boolean; secret: SecretView }> {
      const replaced = await createSecretsRepo(db).setValue(name, box.seal(value));
      if (replaced) return { created: false, secret: view(replaced) };
      try {
        return { created: true, secret: await create(db, name, value) };
      } catch (err) {
        // Created meanwhile by another request: this one replaces its value, as it would have a moment later.
        if (!(err instanceof Conflict && err.code === 'secret_exists')) throw err;
        return { created: false, secret: view((await createSecretsRepo(db).setValue(name, box.seal(value)))!) };
      }
    },

    async delete(db: TenantDb, name: string): Promise<void> {
      if (!(await createSecretsRepo(db).delete(name))) throw secretNotFound();
    },

    /** The names among `names` that are not secrets of the tenant. */
    async missing(db: TenantDb, names: string[]): Promise<string[]> {
      if (names.length === 0) return [];
      const found = new Set((await createSecretsRepo(db).sealed(names)).map((row) => row.name));
      return names.filter((name) => !found.has(name));
    },

    /** The values of the secrets named, opened, by name; a name without a secret is left out. */
    async open(db: TenantDb, names: string[]): Promise<Map<string, string>> {
      if (names.length === 0) return new Map();
      return new Map((await createSecretsRepo(db).sealed(names)).map((row) => [row.name, box.open(row.valueCiphertext)]));
    },
  };
}

export type SecretsService = ReturnType<typeof createSecretsService>;
