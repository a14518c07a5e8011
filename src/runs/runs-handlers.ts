import { DEFAULT_PAGE_SIZE, keysetPage, keysetRequest } from '../http/pagination';
import { Conflict, RateLimited, ValidationFailed } from '../lib/errors';
import type { HandlerMap } from '../http/types';
import type { Invoked, Refusal, RunsService } from './runs-service';

/** A refusal as the API answers it: a held key or a spent budget is a conflict, a rate limit says when to retry. */
function refusalError(refusal: Refusal, now = Date.now()) {
  if (refusal.action === 'rate_limited') return new RateLimited((Date.parse(refusal.until) - now) / 1000, refusal.message);
  return new Conflict(refusal.action === 'skipped' ? 'run_skipped' : refusal.action === 'budget_exhausted' ? 'budget_exhausted' : 'conflict', refusal.message);
}

/** The invocation, or its refusal thrown as the API's error (for the console and MCP, which answer it in their terms). */
export function invocationOf(invoked: Invoked) {
  if (invoked.refused) throw refusalError(invoked.refused);
  return invoked.invocation;
}

export function runsHandlers(runs: RunsService): HandlerMap {
  return {
    invokeJob: async ({ db, params, body }) => {
      const invocation = invocationOf(await runs.invoke(db, params.jobId, body));
      return invocation.duplicate ? { status: 200, body: invocation } : { status: 202, body: invocation };
    },
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
    replayRun: async ({ db, params }) => ({ status: 202, body: invocationOf(await runs.replay(db, params.runId)) }),
  };
}
