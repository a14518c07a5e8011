// When a trigger acts: the one rule, for each kind of trigger, of whether a cause (a webhook delivery, a
// schedule's slot, another job's finished run) starts a run of the trigger's job. A trigger that acts hands
// the run to admission (runs/engine/admission.ts), whose flow control decides whether it runs, waits, folds
// into another or is skipped. The evaluations beside this file (webhook-, schedule- and chain-evaluation)
// only read the causes, apply these rules and record what they decided.
import { Cron } from 'croner';
import type { components } from '../../generated/openapi';
import { contextSize } from './cel-fns';
import { decide, decidePrepared, type Decision as ConditionDecision, type Prepared } from './conditions-fns';
import { matchesEvents } from './event-patterns-fns';
import type { TriggerIndex } from './trigger-index-fns';

export type TriggerDecision = components['schemas']['TriggerDecision'];

/** Every trigger: it acts only while it and its job are enabled (the catalog keeps only those, jobs-catalog.ts). */
export const acting = (job: { enabled: boolean }, trigger: { enabled: boolean }) => job.enabled && trigger.enabled;

// Webhook triggers: a delivery's name (`event.action`) matches one of the trigger's `events` patterns, and its
// conditions hold on the delivery's context. A failing `if` or a broken condition decides `error`: no run.

/** A webhook trigger of a live, enabled job, its conditions compiled once. */
export interface WebhookCandidate<J = unknown> {
  id: string;
  job: J;
  events: string[];
  conditions: Prepared;
}

/** A detail's `actual` whose JSON is longer than this is cut where decisions are recorded. */
export const RECORDED_ACTUAL = 500;

type Detail = TriggerDecision['details'][number];

/** Cuts a large `actual`: a condition on a big field (an issue body) does not copy it into every decision. */
function recordedDetail(detail: Detail): Detail {
  const { actual } = detail;
  // A string's JSON is at most six characters per character and two quotes: short ones need no look.
  if (actual === undefined || actual === null || typeof actual === 'number' || typeof actual === 'boolean' || (typeof actual === 'string' && actual.length * 6 + 2 <= RECORDED_ACTUAL)) return detail;
  const json = JSON.stringify(actual);
  if (json.length <= RECORDED_ACTUAL) return detail;
  // Never between the two halves of a surrogate pair (an emoji): PostgreSQL refuses half of one.
  const end = /[\ud800-\udbff]/.test(json[RECORDED_ACTUAL - 1]) ? RECORDED_ACTUAL - 1 : RECORDED_ACTUAL;
  return { ...detail, actual: `${json.slice(0, end)}…` };
}

/** How one trigger decided on a delivery, as activity and backtests record it. */
export function triggerDecision(triggerId: string, outcome: ConditionDecision): TriggerDecision {
  return { triggerId, decision: outcome.decision, ...(outcome.error ? { error: outcome.error } : {}), details: outcome.details.map((detail) => recordedDetail(detail as Detail)) };
}

/**
 * How triggers as saved decide on a delivery (backtests): those whose `events` match its name evaluate their
 * conditions on its context; the others did not look at it and are left out.
 */
export function decideDelivery<T extends { id: string; config: unknown }>(triggers: T[], name: string, context: Record<string, unknown>): { trigger: T; decision: TriggerDecision }[] {
  const decided: { trigger: T; decision: TriggerDecision }[] = [];
  for (const trigger of triggers) {
    const { events, conditions } = trigger.config as { events: string[]; conditions?: Record<string, unknown> };
    if (matchesEvents(events, name)) decided.push({ trigger, decision: triggerDecision(trigger.id, decide(conditions, context)) });
  }
  return decided;
}

/**
 * How the live candidates of a delivery's source decide on it: the same rule as `decideDelivery`, with the
 * conditions compiled once. Misses are counted, not kept, unless `keepMisses`: a delivery's activity stores
 * only its matches and errors.
 */
export function decideCandidates<J>(candidates: WebhookCandidate<J>[], name: string, context: Record<string, unknown>, keepMisses = false) {
  const decided: { candidate: WebhookCandidate<J>; decision: TriggerDecision }[] = [];
  let misses = 0;
  const size = contextSize(context);
  for (const candidate of candidates) {
    if (!matchesEvents(candidate.events, name)) continue;
    const outcome = decidePrepared(candidate.conditions, context, size);
    if (outcome.decision === 'no-match') misses++;
    if (outcome.decision !== 'no-match' || keepMisses) decided.push({ candidate, decision: triggerDecision(candidate.id, outcome) });
  }
  return { decided, misses };
}

/**
 * The decisions and count of misses of `decideCandidates` over all of a source's candidates, evaluating only
 * those its index leaves: a candidate left out whose events match is certain to be a miss.
 */
export function decideIndexed<J>(index: TriggerIndex<WebhookCandidate<J>>, name: string, context: Record<string, unknown>) {
  const { candidates, eventsMatched } = index.candidatesFor(name, context);
  const { decided } = decideCandidates(candidates, name, context);
  return { decided, misses: eventsMatched - decided.length };
}

// Run triggers (chains): a run of the watched job ends in one of the trigger's `states`, and the trigger's
// conditions hold on that run as the API shows it.

/** A run trigger of a live, enabled job, with what it watches for. */
export interface ChainedTrigger<J = unknown> {
  id: string;
  job: J;
  config: { states: string[]; conditions?: Record<string, unknown> };
}

/** How a run trigger decides on a finished run of the job it watches: null when the run's state is not one it lists. */
export const decideChain = (config: ChainedTrigger['config'], finished: { state: string }, context: Record<string, unknown>): ConditionDecision | null =>
  config.states.includes(finished.state) ? decide(config.conditions, context) : null;

// Schedule triggers: a slot of the trigger's cron expression (in its time zone) acts when it is the newest
// since the trigger was last looked at (or saved) and at most GRACE_MS old; older ones were missed while no
// instance ran and are recorded as skipped rather than run in a burst.

export interface ScheduleConfig {
  cron: string;
  timezone?: string;
  data?: Record<string, unknown>;
}

/** A slot this late still fires (a tick, a busy loop); an older one was missed and is skipped. */
export const GRACE_MS = 60_000;
/** Most slots looked at per trigger and tick; a longer outage records only the newest ones. */
const MAX_SLOTS = 100;

/** The slots in (after, until], oldest first (at most the newest MAX_SLOTS), each with whether it acts. */
export function scheduleSlots(config: ScheduleConfig, after: Date, until: Date): { slot: Date; acts: boolean }[] {
  const cron = new Cron(config.cron, { timezone: config.timezone ?? 'UTC', paused: true });
  // Found backwards from `until`: after a long outage, walking forward through every missed slot of a
  // minutely schedule would hold the event loop for seconds.
  const slots = cron
    .previousRuns(MAX_SLOTS, new Date(until.getTime() + 1))
    .filter((slot) => slot > after)
    .reverse();
  return slots.map((slot, i) => ({ slot, acts: i === slots.length - 1 && until.getTime() - slot.getTime() <= GRACE_MS }));
}

/** What a schedule's run sees: the trigger's data and the slot. */
export const scheduleContext = (config: ScheduleConfig, slot: Date) => ({ data: config.data ?? {}, schedule: { slot: slot.toISOString(), cron: config.cron, timezone: config.timezone ?? 'UTC' } });
