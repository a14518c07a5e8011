import type { HandlerMap } from '../http/types';
import type { SendersService } from './senders-service';

export function sendersHandlers(senders: SendersService): HandlerMap {
  return {
    listSenderConnections: async ({ db }) => ({ status: 200, body: await senders.list(db) }),
    createSenderConnection: async ({ db, body }) => ({ status: 201, body: await senders.create(db, body) }),
    getSenderConnection: async ({ db, params }) => ({ status: 200, body: await senders.get(db, params.senderConnectionId) }),
    updateSenderConnection: async ({ db, params, body }) => ({ status: 200, body: await senders.update(db, params.senderConnectionId, body) }),
    deleteSenderConnection: async ({ db, params }) => {
      await senders.delete(db, params.senderConnectionId);
      return { status: 204, body: undefined };
    },
    runSenderConnectionDiagnostics: async ({ db, params }) => ({ status: 200, body: await senders.diagnose(db, params.senderConnectionId) }),
  };
}
