import { keysetPage, keysetRequest } from '../http/pagination';
import type { HandlerMap } from '../http/types';
import { targetKey, type TargetsService } from './targets-service';

export function targetsHandlers(targets: TargetsService): HandlerMap {
  return {
    listExecutionTargets: async ({ db, query, req }) => {
      const request = keysetRequest<string>('execution-targets', query, 'string');
      const { page, headers } = keysetPage(req, 'execution-targets', await targets.list(db, request), request, targetKey);
      return { status: 200, body: page, headers };
    },
    getExecutionTarget: async ({ db, params }) => ({ status: 200, body: await targets.get(db, params.targetId) }),
    createExecutionTarget: async ({ db, body }) => ({ status: 201, body: await targets.create(db, body) }),
    updateExecutionTarget: async ({ db, params, body }) => ({ status: 200, body: await targets.update(db, params.targetId, body) }),
    runTargetDiagnostics: async ({ db, params }) => ({ status: 200, body: await targets.diagnose(db, params.targetId) }),
    deleteExecutionTarget: async ({ db, params }) => {
      await targets.delete(db, params.targetId);
      return { status: 204, body: undefined };
    },
  };
}
