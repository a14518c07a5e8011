// A tenant's live jobs kept in memory for the hot paths (invocations, webhook evaluation, dispatch, chains):
// read in one call on first use, with each webhook trigger's conditions compiled once, and dropped whole
// when any job of the tenant changes (`changed`; on PostgreSQL every instance hears of it, domains.ts). A
// read that began before a change is not kept (generations), so a change is never hidden by a slow read.
import { acting, type ChainedTrigger as Chained, type WebhookCandidate as Candidate } from '../triggers/acts-fns';
import { prepareConditions } from '../triggers/conditions-fns';
import { indexTriggers, type TriggerIndex } from '../triggers/trigger-index-fns';
import type { JobRow } from './jobs-repo';

/** A webhook trigger of a live, enabled job, as evaluation needs it. */
export type WebhookCandidate = Candidate<JobRow>;

/** A run trigger of a live, enabled job, with what it watches for. */
export type ChainedTrigger = Chained<JobRow>;

export interface LiveJobs {
  /** A live job by id or slug; an id wins over another job's slug that happens to spell it. */
  find(ref: string): JobRow | null;
  /** The enabled webhook triggers on the source of enabled jobs, in job and position order. */
  webhookCandidates(sourceId: string): WebhookCandidate[];
  /** The same candidates indexed by event name and literal, so that a delivery evaluates only those it could start. */
  webhookIndex(sourceId: string): TriggerIndex<WebhookCandidate>;
  /** The enabled run triggers of enabled jobs that watch `jobId`. */
  watching(jobId: string): ChainedTrigger[];
}

export function indexJobs(jobs: JobRow[]): LiveJobs {
  const byId = new Map<string, JobRow>();
  const bySlug = new Map<string, JobRow>();
  const bySource = new Map<string, WebhookCandidate[]>();
  const byWatched = new Map<string, ChainedTrigger[]>();
  const indexes = new Map<string, TriggerIndex<WebhookCandidate>>();
  const push = <T>(map: Map<string, T[]>, key: string, item: T) => (map.get(key) ?? map.set(key, []).get(key)!).push(item);
  for (const job of [...jobs].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    byId.set(job.id, job);
    bySlug.set(job.slug, job);
    for (const trigger of job.triggers) {
      if (!acting(job, trigger)) continue;
      const config = trigger.config as Record<string, unknown>;
      if (trigger.type === 'webhook' && trigger.sourceId) {
        push(bySource, trigger.sourceId, { id: trigger.id, job, events: config.events as string[], conditions: prepareConditions(config.conditions) });
      } else if (trigger.type === 'run' && trigger.watchedJobId) {
        push(byWatched, trigger.watchedJobId, { id: trigger.id, job, config: config as ChainedTrigger['config'] });
      }
    }
  }
  return {
    find: (ref) => byId.get(ref) ?? bySlug.get(ref) ?? null,
    webhookCandidates: (sourceId) => bySource.get(sourceId) ?? [],
    // Built on a source's first delivery: most sources of a tenant see none before the next change.
    webhookIndex: (sourceId) => indexes.get(sourceId) ?? indexes.set(sourceId, indexTriggers(bySource.get(sourceId) ?? [])).get(sourceId)!,
    watching: (jobId) => byWatched.get(jobId) ?? [],
  };
}

/** Tenants kept at most; the least recently loaded goes first. */
const TENANTS_KEPT = 1000;

export function createJobsCatalog() {
  const kept = new Map<string, Promise<LiveJobs>>();
  const generations = new Map<string, number>();
  const generation = (tenantId: string) => generations.get(tenantId) ?? 0;

  return {
    /** The tenant's live jobs, read with `load` when not kept. */
    live(tenantId: string, load: () => Promise<JobRow[]>): Promise<LiveJobs> {
      let entry = kept.get(tenantId);
      if (!entry) {
        const at = generation(tenantId);
        entry = load().then(indexJobs);
        if (kept.size >= TENANTS_KEPT) kept.delete(kept.keys().next().value!);
        kept.set(tenantId, entry);
        // A read that fails, or that a change overtook, is not kept.
        entry.then(
          () => at !== generation(tenantId) && kept.get(tenantId) === entry && kept.delete(tenantId),
          () => kept.get(tenantId) === entry && kept.delete(tenantId),
        );
      }
      return entry;
    },

    /** A job of the tenant changed (here or, heard through the database, on another instance). */
    changed(tenantId: string) {
      generations.set(tenantId, generation(tenantId) + 1);
      kept.delete(tenantId);
    },

    /** Everything may have changed unheard (the link that carries changes between instances was lost). */
    forgetAll() {
      for (const tenantId of kept.keys()) generations.set(tenantId, generation(tenantId) + 1);
      kept.clear();
    },
  };
}

export type JobsCatalog = ReturnType<typeof createJobsCatalog>;
