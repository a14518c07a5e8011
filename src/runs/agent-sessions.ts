// Which agent session a run continues or begins. Every run of an agent whose events are read keeps its
// agent's state under a key: the value of its job's `agent.continue.key` for it, or else its own id (so that
// an invocation can name it in `continueRunId` later). A run continues the session of the latest earlier run
// under the same key, or of the run it names, when the state kept for it is still there; otherwise it
// begins a new one, and its trace says why it could not continue.
import type { TenantDb } from '../db/tenant-scope';
import type { SessionStates, StateOwner } from '../integrations/executor';
import type { JobRow, JobsService } from '../jobs/jobs-service';
import type { Spent } from '../agents/agent-events-fns';
import { sha256 } from '../lib/hash';
import { createRunsRepo } from './runs-repo';

export interface RunSession {
  /** What names the session (`key:<value>`, `run:<id>`), kept on the run. */
  sessionKey: string;
  /** The folder or volume name of its kept state: a hash of the tenant, the job and the session key. */
  stateKey: string;
  /** The CLI's id of the session to continue; null begins a new one. */
  resume: string | null;
  /** What the trace's `session_started` adds: the run continued, or why it could not. */
  note: { continuedFromRunId: string } | { notContinued: string } | null;
  /** The tokens the session's earlier runs spent, for CLIs that report a resumed session's totals (null: a new session). */
  earlier: Tokens | null;
}

export type Tokens = Pick<Spent, 'inputTokens' | 'outputTokens' | 'cachedTokens'>;

/** What a run was started with, as runs-service keeps it. */
export interface Inputs {
  data?: Record<string, unknown>;
  context?: Record<string, unknown>;
  continueRunId?: string;
}

/** The context a run's templates and keys read, from what it was started with. */
export const runContext = (inputs: Inputs, job: Pick<JobRow, 'id' | 'slug' | 'name'>): Record<string, unknown> => ({
  ...(inputs.context ?? { data: inputs.data ?? {} }),
  job: { id: job.id, slug: job.slug, name: job.name },
});

/** The name of a session's kept state: a hash of the tenant, the job and the session key, safe as a file or volume name. */
const stateKeyOf = (tenantId: string, jobId: string, sessionKey: string) => `sess_${sha256(`${tenantId}\0${jobId}\0${sessionKey}`).slice(0, 32)}`;

/** The session of the run `runId`, started with `inputs`. */
export async function sessionOf(db: TenantDb, jobs: Pick<JobsService, 'sessionKey'>, job: JobRow, runId: string, inputs: Inputs, states: Pick<SessionStates, 'has'> | undefined): Promise<RunSession> {
  const repo = createRunsRepo(db);
  const own = `run:${runId}`;
  let sessionKey = own;
  let earlier: { id: string; sessionId: string | null } | null = null;
  let notContinued: string | null = null;

  if (inputs.continueRunId) {
    const named = await repo.find(inputs.continueRunId);
    if (named?.sessionKey && named.sessionId) [sessionKey, earlier] = [named.sessionKey, named];
    else notContinued = `run ${inputs.continueRunId} ${named ? 'began no agent session' : 'is gone'}`;
  } else {
    const key = jobs.sessionKey(job, runContext(inputs, job));
    if (!key.ok) notContinued = key.error;
    else if (key.key !== null) {
      sessionKey = `key:${key.key}`;
      earlier = await repo.latestSession(job.id, sessionKey, runId);
    }
  }

  const stateKey = stateKeyOf(db.$tenant().id, job.id, sessionKey);
  if (earlier && !states) [earlier, notContinued] = [null, "this run's target keeps no agent state between runs"];
  else if (earlier && !(await states!.has(stateKey))) [earlier, notContinued] = [null, `the state kept for run ${earlier.id}'s session is gone`];
  const spent = earlier?.sessionId ? await repo.sessionUsages(job.id, earlier.sessionId) : [];
  return {
    sessionKey,
    stateKey,
    resume: earlier?.sessionId ?? null,
    note: earlier ? { continuedFromRunId: earlier.id } : notContinued ? { notContinued } : null,
    earlier: earlier
      ? spent.reduce<Tokens>((sum, usage) => ({ inputTokens: sum.inputTokens + (usage?.inputTokens ?? 0), outputTokens: sum.outputTokens + (usage?.outputTokens ?? 0), cachedTokens: sum.cachedTokens + (usage?.cachedTokens ?? 0) }), { inputTokens: 0, outputTokens: 0, cachedTokens: 0 })
      : null,
  };
}

/**
 * Whether a kept state still serves a run: some run of its job, not yet deleted, began or continued its
 * session. What the executors' sweeps ask, state by state; each job's session keys are read once a sweep.
 */
export function stateUse(tenantDb: (tenantId: string) => TenantDb): (owner: StateOwner) => Promise<boolean> {
  const keysOf = new Map<string, Promise<Set<string>>>();
  return async ({ key, tenantId, jobId }) => {
    const job = `${tenantId}\0${jobId}`;
    let keys = keysOf.get(job);
    if (!keys) {
      keys = createRunsRepo(tenantDb(tenantId))
        .sessionKeys(jobId)
        .then((sessionKeys) => new Set(sessionKeys.map((sessionKey) => stateKeyOf(tenantId, jobId, sessionKey))));
      keysOf.set(job, keys);
    }
    return (await keys).has(key);
  };
}
