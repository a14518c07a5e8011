// Paths a job reads that its deliveries may never carry: not refused (the sender's schemas can lag, a field
// can be rare), but flagged on the job's answer. Two sources of evidence: GitHub's published payload schemas
// for the events a trigger lists, and the source's recent recorded deliveries of those events.
import type { components } from '../../generated/openapi';
import { select, type Step } from '../triggers/condition-paths';
import { compileConditions } from '../triggers/conditions-fns';
import { matchesEvents } from '../triggers/event-patterns-fns';
import { eventsWithRoom, githubEventNames } from '../triggers/github-payloads-fns';
import { CelProblem, compileCel } from '../triggers/cel-fns';
import { CONTEXT_ROOTS } from '../triggers/trigger-contexts-fns';
import { KEYED_PARTS, type FlowControl } from './flow-control-fns';
import type { Trigger } from './jobs-fns';
import { compileTemplate, templatePaths } from './templates-fns';

export type JobWarning = components['schemas']['JobWarning'];
type WebhookTrigger = Extract<Trigger, { type: 'webhook' }>;

/** A recorded delivery of a source: its event name (`issues.labeled`) and the context its triggers saw. */
export interface RecordedDelivery {
  name: string;
  context: Record<string, unknown>;
}

/** How many of a trigger's recent deliveries are looked at. */
export const RECORDED_DELIVERIES = 50;

interface PathUse {
  field: string;
  text: string;
  steps: Step[];
}

const WEBHOOK_ROOTS = new Set(CONTEXT_ROOTS.webhook);

const textOf = (path: (string | number)[]) => path.map((part, n) => (typeof part === 'number' ? `[${part}]` : n ? `.${part}` : part)).join('');
const stepsOf = (path: (string | number)[]): Step[] => path.map((part) => (typeof part === 'number' ? { index: part } : { key: part }));

function templateUses(field: string, source: string | null | undefined): PathUse[] {
  if (!source) return [];
  try {
    return templatePaths(compileTemplate(source)).map((path) => ({ field, text: textOf(path), steps: stepsOf(path) }));
  } catch {
    return []; // refused at save: a job saved before stays readable
  }
}

/** The paths each flow-control key selects as written (`flowControl.concurrency.key`). */
function keyUses(flowControl: FlowControl | null | undefined): PathUse[] {
  return KEYED_PARTS.flatMap((part) => {
    const key = flowControl?.[part]?.key;
    if (key === undefined) return [];
    try {
      return compileCel(key).paths.map((path) => ({ field: `flowControl.${part}.key`, text: path.join('.'), steps: stepsOf(path) }));
    } catch (err) {
      if (err instanceof CelProblem) return []; // refused at save: a job saved before stays readable
      throw err;
    }
  });
}

function conditionUses(trigger: WebhookTrigger, where: string): PathUse[] {
  if (trigger.conditions === undefined) return [];
  try {
    const compiled = compileConditions(trigger.conditions);
    return [
      ...compiled.leaves.map((leaf) => ({ field: `${where}.conditions.${leaf.part}[${leaf.index}].path`, text: leaf.path, steps: leaf.parsed.steps })),
      ...(compiled.cel?.paths ?? []).map((path) => ({ field: `${where}.conditions.if`, text: path.join('.'), steps: stepsOf(path) })),
    ];
  } catch {
    return [];
  }
}

const rootOf = (use: PathUse) => (use.steps[0] as { key: string }).key;

/** What the evidence of some triggers says of one path, or null. */
function warningFor(use: PathUse, githubEvents: string[] | null, deliveries: RecordedDelivery[]): JobWarning | null {
  if (githubEvents?.length && rootOf(use) === 'payload' && use.steps.length > 1 && !eventsWithRoom(githubEvents, use.steps.slice(1)).length) {
    const events = githubEvents.length > 5 ? `${githubEvents.slice(0, 5).join(', ')} and ${githubEvents.length - 5} more` : githubEvents.join(', ');
    return { field: use.field, message: `\`${use.text}\` is in no payload of the listed GitHub events (${events}), by GitHub's published webhook schemas.` };
  }
  const absent = deliveries.filter((delivery) => select(delivery.context, { steps: use.steps, many: false }).length === 0).length;
  if (deliveries.length && absent === deliveries.length) {
    const names = [...new Set(deliveries.map((delivery) => delivery.name))].join(', ');
    return { field: use.field, message: `\`${use.text}\` is absent in ${absent} of ${deliveries.length} recorded ${names} deliveries.` };
  }
  return null;
}

/**
 * The warnings of a job: each path of its templates, of its flow-control keys and of its webhook triggers'
 * conditions (leaves, and what CEL selects as written) that no listed GitHub event's schema has room for, or
 * that none of the recent recorded deliveries of its triggers' events carried. `formats` is by webhook source
 * id, `recorded` by trigger id (that trigger's source's deliveries, newest first).
 */
export function jobWarnings(
  job: { promptTemplate: string; runNameTemplate?: string | null; triggers: Trigger[]; flowControl?: FlowControl | null },
  formats: Map<string, string>,
  recorded: Map<string, RecordedDelivery[]>,
): JobWarning[] {
  const webhooks = job.triggers.map((trigger, index) => ({ trigger, index })).filter((entry): entry is { trigger: WebhookTrigger; index: number } => entry.trigger.type === 'webhook');
  const evidence = webhooks.map(({ trigger }) => ({
    githubEvents: formats.get(trigger.sourceId) === 'github' ? githubEventNames().filter((name) => matchesEvents(trigger.events, name)) : null,
    deliveries: (recorded.get(trigger.id) ?? []).filter((delivery) => matchesEvents(trigger.events, delivery.name)).slice(0, RECORDED_DELIVERIES),
  }));
  const warnings: JobWarning[] = [];
  const add = (warning: JobWarning | null) => warning && !warnings.some((w) => w.field === warning.field && w.message === warning.message) && warnings.push(warning);

  webhooks.forEach(({ trigger, index }, n) => {
    for (const use of conditionUses(trigger, `triggers[${index}]`)) if (WEBHOOK_ROOTS.has(rootOf(use))) add(warningFor(use, evidence[n].githubEvents, evidence[n].deliveries));
  });
  if (webhooks.length) {
    // A template or a key serves every trigger: the schemas judge only when every webhook source is GitHub.
    const githubEvents = evidence.every((e) => e.githubEvents) ? [...new Set(evidence.flatMap((e) => e.githubEvents!))] : null;
    const deliveries = [...new Set(evidence.flatMap((e) => e.deliveries))];
    for (const use of [...templateUses('promptTemplate', job.promptTemplate), ...templateUses('runNameTemplate', job.runNameTemplate), ...keyUses(job.flowControl)]) {
      if (WEBHOOK_ROOTS.has(rootOf(use))) add(warningFor(use, githubEvents, deliveries));
    }
  }
  return warnings;
}
