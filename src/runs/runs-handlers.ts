import { DEFAULT_PAGE_SIZE, keysetPage, keysetRequest } from '../http/pagination';
import { ValidationFailed } from '../lib/errors';
import type { HandlerMap } from '../http/types';
import type { RunsService } from './runs-service';

export function runsHandlers(runs: RunsService): HandlerMap {
  return {
    invokeJob: async ({ db, params, body }) => runs.invoke(db, params.jobId, body),
    listRuns: async ({ db, query, req }) => {
      const filter = { jobId: query.jobId, state: query.state, triggerType: query.triggerType };
      const list = `runs?${new URLSearchParams(Object.entries(filter).filter(([, value]) => value !== undefined) as [string, string][])}`;
      const request = keysetRequest<string>(list, query, 'string');
      const { page, headers } = keysetPage(req, list, await runs.list(db, request, filter), request, (run) => run.id);
      return { status: 200, body: page, headers };
    },
    getRun: async ({ db, params }) => ({ status: 200, body: await runs.get(db, params.runId) }),
    getRunPatch: async ({ db, params }) => ({ status: 200, body: await runs.patch(db, params.runId) }),
    getRunTrace: async ({ db, params, query, req }) => {
      const list = `trace:${params.runId}`;
      if (query.after !== undefined && query.cursor !== undefined) throw new ValidationFailed('`after` and `cursor` are alternatives: send one.');
      // `after` reads on from a seq the caller has, like the key a cursor carries.
      const request = query.after === undefined ? keysetRequest<number>(list, query, 'number') : { limit: query.limit ?? DEFAULT_PAGE_SIZE, after: query.after };
      const { page, headers } = keysetPage(req, list, await runs.trace(db, params.runId, request), request, (event) => event.seq);
      return { status: 200, body: page, headers };
    },
    stopRun: async ({ db, params }) => ({ status: 202, body: await runs.stop(db, params.runId) }),
    replayRun: async ({ db, params }) => runs.replay(db, params.runId),
  };
}
