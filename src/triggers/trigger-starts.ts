// What the evaluations of triggers need from the domains above them, as ports: the tenant's live triggers
// and a way to start a run. Runs and jobs are wired to them in domains.ts.
import type { components } from '../../generated/openapi';
import type { TenantDb } from '../db/tenant-scope';
import type { ChainedTrigger, WebhookCandidate } from './acts-fns';
import type { TriggerIndex } from './trigger-index-fns';

/** A trigger's decision on a delivery, as its activity records it. */
export type Decision = components['schemas']['WebhookActivity']['decisions'][number];

/** Why a trigger that acted started no run: flow control (admission) decided so, or the tenant's budget is spent. */
export type FlowControlOutcome = NonNullable<Decision['flowControl']>;

/** What a trigger's cause led to: a run, flow control's decision not to start one, or templates that cannot render with it. */
export type TriggeredStart = { runId: string; flowControl?: undefined; invalidTemplate?: undefined } | { runId: null; flowControl: FlowControlOutcome; invalidTemplate?: undefined } | { runId?: undefined; invalidTemplate: string };

/** The job a trigger belongs to, as starting a run needs it (the jobs domain's row). */
export interface TriggerJob {
  id: string;
  updatedAt: Date;
}

/**
 * Starts a run of the trigger's job with the context its cause gave, once per cause: the same trigger and
 * cause again answer the run they started.
 */
export type StartTriggered<J extends TriggerJob> = (db: TenantDb, job: J, trigger: { type: 'webhook' | 'schedule' | 'run'; id: string }, cause: string, context: Record<string, unknown>) => Promise<TriggeredStart>;

/** A tenant's live triggers, from the jobs catalog. */
export interface LiveTriggers<J extends TriggerJob> {
  /** The webhook triggers on a source, indexed by event name and literal. */
  webhookIndex(sourceId: string): TriggerIndex<WebhookCandidate<J>>;
  /** The run triggers that watch a job. */
  watching(jobId: string): ChainedTrigger<J>[];
}
