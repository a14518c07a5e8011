import type { HandlerMap } from '../http/types';
import type { ConnectionsService } from './connections-service';
import type { DiagnosticsService } from './diagnostics-service';

export function connectionsHandlers(connections: ConnectionsService, diagnostics: DiagnosticsService): HandlerMap {
  return {
    runVmhostDiagnostics: async ({ db, params }) => ({ status: 200, body: await diagnostics.run(db, params.connectionId) }),
    listVmhostConnections: async ({ db }) => ({ status: 200, body: await connections.list(db) }),
    createVmhostConnection: async ({ db, body }) => ({ status: 201, body: await connections.create(db, body) }),
    getVmhostConnection: async ({ db, params }) => ({ status: 200, body: await connections.get(db, params.connectionId) }),
    updateVmhostConnection: async ({ db, params, body }) => ({ status: 200, body: await connections.update(db, params.connectionId, body) }),
    deleteVmhostConnection: async ({ db, params }) => {
      await connections.delete(db, params.connectionId);
      return { status: 204, body: undefined };
    },
    putAgentIntegration: async ({ db, body }) => ({ status: 200, body: await connections.saveIntegration(db, body) }),
    getAgentIntegration: async ({ db }) => ({ status: 200, body: await connections.getIntegration(db) }),
    deleteAgentIntegration: async ({ db }) => {
      await connections.deleteIntegration(db);
      return { status: 204, body: undefined };
    },
  };
}
