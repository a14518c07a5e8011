import type { HandlerMap } from '../http/types';
import type { SecretsService } from './secrets-service';

const location = (name: string) => ({ Location: `/api/v1/secrets/${encodeURIComponent(name)}` });

export function secretsHandlers(secrets: SecretsService): HandlerMap {
  return {
    listSecrets: async ({ db }) => ({ status: 200, body: await secrets.list(db) }),
    createSecret: async ({ db, body }) => ({ status: 201, body: await secrets.create(db, body.name, body.value), headers: location(body.name) }),
    getSecret: async ({ db, params }) => ({ status: 200, body: await secrets.get(db, params.secretName) }),
    putSecret: async ({ db, params, body }) => {
      const { created, secret } = await secrets.put(db, params.secretName, body.value);
      return created ? { status: 201, body: secret, headers: location(secret.name) } : { status: 200, body: secret };
    },
    deleteSecret: async ({ db, params }) => {
      await secrets.delete(db, params.secretName);
      return { status: 204, body: undefined };
    },
  };
}
