// Evaluation of recorded webhook deliveries: every candidate trigger decides on the delivery's context (the
// rule: acts-fns.ts), the matching ones start a run (once per trigger and delivery), and the matches and
// errors are saved with the count of misses and the time (a miss's details are worked out when read).
// Deliveries wait in the database (`evaluatedAt` null) and are evaluated oldest first, paced so that intake
// keeps answering during a burst; a restart takes the waiting ones up again.
import type { TenantDb } from '../db/tenant-scope';
import type { Logger } from '../lib/logger';
import { createPacing } from '../lib/pacing';
import type { WorkQueue } from '../lib/work-queue';
import { decideIndexed } from './acts-fns';
import { eventName } from './event-patterns-fns';
import type { Decision, LiveTriggers, StartTriggered, TriggerJob } from './trigger-starts';

/** Waiting deliveries read at a time. */
const PENDING_BATCH = 100;
/** While deliveries arrive faster than the loop can take, evaluating them takes at most this share of it. */
const EVALUATION_SHARE = 0.1;
/** A pass in which some delivery failed is followed by another after this long. */
const RETRY_MS = 30_000;

/** A recorded delivery waiting for evaluation. */
export interface PendingDelivery {
  tenantId: string;
  id: string;
  sourceId: string;
  event: string;
  action: string | null;
  context: unknown;
}

/** Deliveries waiting for evaluation, across tenants, oldest first, after the id `after`. */
export type PendingDeliveries = (after: string | undefined, take: number) => Promise<PendingDelivery[]>;

export interface EvaluationDeps<J extends TriggerJob> {
  queue: WorkQueue;
  start: StartTriggered<J>;
  live(db: TenantDb): Promise<LiveTriggers<J>>;
  tenantDb: (tenantId: string) => TenantDb;
  pendingDeliveries: PendingDeliveries;
  /** Saves a delivery's decisions, misses and when they were made. */
  record(db: TenantDb, deliveryId: string, decisions: Decision[], misses: number, at: Date): PromiseLike<unknown>;
  /** Whether intake is answering deliveries: evaluation yields to it. */
  intakeBusy(): boolean;
  /** Told of each delivery once its decisions are saved (tracing). */
  evaluated?: (delivery: PendingDelivery, decisions: Decision[], misses: number, at: Date) => void;
  logger: Logger;
  now: () => Date;
}

export function createDeliveryEvaluation<J extends TriggerJob>({ queue, start, live, tenantDb, pendingDeliveries, record, intakeBusy, evaluated = () => {}, logger, now }: EvaluationDeps<J>) {
  const pacing = createPacing({ share: EVALUATION_SHARE, foregroundBusy: intakeBusy });

  /**
   * Every candidate trigger (its events match) decides; the matching ones start a run. Fails closed. Answers
   * once the runs are started, with the saving of the decisions under way (`saved`).
   */
  async function evaluate(activity: PendingDelivery): Promise<{ saved: Promise<void> }> {
    const db = tenantDb(activity.tenantId);
    const context = activity.context as Record<string, unknown>;
    const triggers = await live(db);
    const decisions: Decision[] = [];
    const { decided, misses } = decideIndexed(triggers.webhookIndex(activity.sourceId), eventName(activity.event, activity.action), context);
    for (const { candidate, decision: outcome } of decided) {
      const decision: Decision = { jobId: candidate.job.id, ...outcome, runId: null };
      if (decision.decision === 'match') {
        const started = await start(db, candidate.job, { type: 'webhook', id: candidate.id }, activity.id, context);
        if (started.invalidTemplate !== undefined) Object.assign(decision, { decision: 'error', error: started.invalidTemplate });
        else {
          decision.runId = started.runId;
          if (started.flowControl) decision.flowControl = started.flowControl;
        }
      }
      decisions.push(decision);
    }
    const at = now();
    const saved = Promise.resolve(record(db, activity.id, decisions, misses, at)).then(() => evaluated(activity, decisions, misses, at));
    return { saved };
  }

  /**
   * Evaluates the waiting deliveries, oldest first, paced so that intake keeps answering during a burst
   * (the burst is recorded; its evaluation catches up after). One that fails stays waiting for the next pass.
   * A delivery's decisions are saved while the next one is evaluated, so that the save and the next one's
   * runs can go in one commit; a run starts once per trigger and delivery, so a delivery whose save failed
   * starts nothing twice when it is evaluated again.
   */
  async function evaluatePending() {
    let after: string | undefined;
    let failed = 0;
    for (let batch = await pendingDeliveries(after, PENDING_BATCH); batch.length > 0; batch = await pendingDeliveries(after, PENDING_BATCH)) {
      const saving: Promise<void>[] = [];
      for (const delivery of batch) {
        const fail = (err: unknown) => {
          failed++;
          logger.error({ err, activityId: delivery.id }, 'a webhook delivery could not be evaluated; it stays waiting');
        };
        await pacing.step(() => evaluate(delivery)).then(({ saved }) => saving.push(saved.catch(fail)), fail);
        after = delivery.id;
      }
      await Promise.all(saving);
    }
    // A failure may be passing (a busy database): the next pass comes without waiting for a new delivery.
    if (failed) queue.enqueue({ kind: 'webhook-evaluation', key: 'pending', payload: {}, delayMs: RETRY_MS });
  }

  const soon = () => queue.enqueue({ kind: 'webhook-evaluation', key: 'pending', payload: {} });
  queue.handle('webhook-evaluation', evaluatePending);

  return {
    /** Evaluates the waiting deliveries soon: a new one was recorded, or a stop left some. */
    soon,
  };
}
