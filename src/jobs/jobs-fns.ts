// Pure rules of jobs: slugs, the triggers as stored, and the checks a job passes before it is saved
// (templates parse, conditions compile, input schemas compile, schedules read).
import type { ErrorObject } from 'ajv';
import type { ValidateFunction } from 'ajv/dist/2020';
import { Cron } from 'croner';
import type { components } from '../../generated/openapi';
import { AppError, ValidationFailed } from '../lib/errors';
import { newId } from '../lib/ids';
import { clip, closestName, listNames } from '../lib/text';
import { compileConditions, ConditionProblem, type CompiledConditions } from '../triggers/conditions-fns';
import { eventPatternProblem } from '../triggers/event-patterns-fns';
import { CONTEXT_ROOTS, EVERY_RUN_ROOTS } from '../triggers/trigger-contexts-fns';
import { compileInputSchema, InputSchemaProblem } from './input-schema-fns';
import { flowControlProblems, type FlowControl } from './flow-control-fns';
import { compileTemplate, templateVariables, TemplateProblem, type TemplateVariable } from './templates-fns';

export type TriggerInput = components['schemas']['TriggerInput'];
export type Trigger = components['schemas']['Trigger'];
export type JobView = components['schemas']['Job'];
export type JobEnv = components['schemas']['JobEnv'];

/** The names of the secrets `env` refers to. */
export const secretNamesOf = (env: JobEnv | null | undefined): string[] =>
  Object.values(env ?? {}).flatMap((value) => (typeof value === 'object' ? [value.secret] : []));

/** Variables named like the service's own would be overridden by them: refused rather than ignored. */
export function checkEnv(env: JobEnv | undefined): void {
  const reserved = Object.keys(env ?? {}).find((name) => name.toUpperCase().startsWith('FLOWS_'));
  if (reserved) throw new ValidationFailed(`\`env.${clip(reserved)}\`: names starting with FLOWS_ are the service's own variables.`);
}

export class InvalidTemplate extends AppError {
  constructor(message: string) {
    super(400, 'invalid_template', `Invalid template: ${message}.`);
  }
}

export class InvalidConditions extends AppError {
  constructor(message: string) {
    super(400, 'invalid_conditions', `Invalid conditions: ${message}.`);
  }
}

/** 400 when a job is saved with the schema; 409 when a job saved before the check is invoked. */
export class InvalidInputSchema extends AppError {
  constructor(subject: string, problem: InputSchemaProblem, status: 400 | 409 = 400) {
    const saved = status === 409 ? ' (save the job with a corrected schema to invoke it)' : '';
    super(status, 'invalid_input_schema', `${subject} is refused at \`${problem.pointer || '/'}\`: ${problem.message}${saved}.`);
  }
}

/**
 * Invocation data its trigger's `inputSchema` refuses. `field` is the part at fault within the data
 * (`number`, `items[0].name`; '' for the data as a whole) and `problem` what is wrong with it, so that a
 * caller that took the data as arguments (an MCP tool) can name its own argument.
 */
export class InvalidInvocationData extends ValidationFailed {
  readonly field: string;
  readonly problem: string;

  constructor(error: ErrorObject | undefined, triggerId: string | null) {
    const segments = (error?.instancePath ?? '').split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    // A missing or an unknown property is named itself, not the object that lacks or has it.
    const named = error?.keyword === 'required' ? { name: error.params.missingProperty, problem: 'is required' } : error?.keyword === 'additionalProperties' ? { name: error.params.additionalProperty, problem: 'is not allowed' } : null;
    if (named) segments.push(named.name);
    const field = clip(segments.reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), ''));
    const problem = named?.problem ?? error?.message ?? 'is invalid';
    super(`\`${field ? `data.${field}` : 'data'}\` ${problem} (inputSchema of trigger ${triggerId}).`);
    this.field = field;
    this.problem = problem;
  }
}

const SLUG = /^[a-z][a-z0-9_-]{0,29}$/;
const SLUG_MAX = 30;

/** `Fix labelled issues!` → `fix-labelled-issues`; a name with no letter or digit to keep gives `job`. */
export function slugFromName(name: string): string {
  const words = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^[^a-z]+/, '')
    .slice(0, SLUG_MAX)
    .replace(/-+$/, '');
  return SLUG.test(words) ? words : 'job';
}

/** `base`, or `base-2`, `base-3`, … cut to fit, for the n-th attempt to find a free slug. */
export function slugCandidate(base: string, attempt: number): string {
  if (attempt === 1) return base;
  const suffix = `-${attempt}`;
  return base.slice(0, SLUG_MAX - suffix.length).replace(/-+$/, '') + suffix;
}

/** A deleted job keeps its row under a slug no caller can choose, which frees its own slug. */
export const deletedSlug = (jobId: string) => `~${jobId}`;

/** The stored form: every trigger has an `id` (kept when given, unique within the job) and `enabled`. */
export function withIdentity(inputs: TriggerInput[]): Trigger[] {
  const seen = new Set<string>();
  return inputs.map((input, index) => {
    const id = input.id ?? newId('trg');
    if (seen.has(id)) throw new ValidationFailed(`\`triggers[${index}].id\` "${clip(id)}" is used by another trigger of the job.`);
    seen.add(id);
    return { ...input, id, enabled: input.enabled ?? true } as Trigger;
  });
}

/** A template that does not parse or render becomes 400 `invalid_template` (naming `field`); other errors stay. */
export function asInvalidTemplate(err: unknown, field: string | null): unknown {
  return err instanceof TemplateProblem ? new InvalidTemplate(field ? `\`${field}\`, ${err.message}` : err.message) : err;
}

/** An invocation trigger's checked and compiled `inputSchema`; an `InvalidInputSchema` names the problem. */
export function inputValidator(schema: Record<string, unknown>, subject: string, status: 400 | 409 = 400): ValidateFunction {
  try {
    return compileInputSchema(schema);
  } catch (err) {
    if (err instanceof InputSchemaProblem) throw new InvalidInputSchema(subject, err, status);
    throw err;
  }
}

function checkSchedule(trigger: components['schemas']['ScheduleTrigger'], where: string) {
  if (trigger.timezone !== undefined) {
    try {
      new Intl.DateTimeFormat('en', { timeZone: trigger.timezone });
    } catch {
      throw new ValidationFailed(`\`${where}.timezone\` "${clip(trigger.timezone)}" is not an IANA time zone.`);
    }
  }
  const fields = trigger.cron.trim().split(/\s+/);
  let problem = fields.length === 5 ? null : 'it needs five fields (minute hour day-of-month month day-of-week)';
  try {
    if (!problem) new Cron(trigger.cron, { timezone: trigger.timezone ?? 'UTC', paused: true });
  } catch (err) {
    problem = clip((err as Error).message.replace(/^CronPattern: /, ''));
  }
  if (problem) throw new ValidationFailed(`\`${where}.cron\` is not a valid cron expression: ${problem}.`);
}

/** Event patterns within their bounds (see event-patterns-fns): refused at save, never at a delivery. */
function checkEvents(events: string[], where: string) {
  events.forEach((pattern, i) => {
    const problem = eventPatternProblem(pattern);
    if (problem) throw new ValidationFailed(`\`${where}.events[${i}]\` ${problem}.`);
  });
}

/** A mistake in a job's templates or conditions: the answer names every one. */
interface JobProblem {
  code: 'invalid_template' | 'invalid_conditions';
  message: string;
}

function refuse(problems: JobProblem[]): never {
  const [first] = problems;
  if (problems.length === 1) throw first.code === 'invalid_template' ? new InvalidTemplate(first.message) : new InvalidConditions(first.message);
  throw new AppError(400, first.code, `The job has ${problems.length} problems: ${problems.map((problem, n) => `(${n + 1}) ${problem.message}`).join('; ')}.`);
}

const didYouMean = (name: string, names: readonly string[]) => {
  const near = closestName(name, names);
  return near ? ` (did you mean \`${near}\`?)` : '';
};

/**
 * What a template may read: what any of the job's triggers puts in a run's context (a job without triggers is
 * only invoked directly). Triggers are named by their place in the list, as the caller wrote them: an id a
 * trigger was given on saving is one the caller may never have seen.
 */
function templateRoots(triggers: Trigger[]): { roots: string[]; from: string } {
  const types = triggers.length ? [...new Set(triggers.map((trigger) => trigger.type))] : (['invocation'] as const);
  const roots = [...new Set([...EVERY_RUN_ROOTS, ...types.flatMap((type) => CONTEXT_ROOTS[type])])];
  return { roots, from: triggers.length ? `its ${triggers.map((trigger, index) => `${trigger.type} trigger \`triggers[${index}]\``).join(', ')}` : 'a direct invocation, as the job has no triggers' };
}

function templateProblems(field: string, source: string, { roots, from }: { roots: string[]; from: string }): JobProblem[] {
  let variables: TemplateVariable[];
  try {
    variables = templateVariables(compileTemplate(source));
  } catch (err) {
    if (err instanceof TemplateProblem) return [{ code: 'invalid_template', message: `\`${field}\`, ${err.message}` }];
    throw err;
  }
  return variables
    .filter(({ name }) => !roots.includes(name))
    .map(({ name, line, column }) => ({
      code: 'invalid_template',
      message: `\`${field}\`, line ${line}, column ${column}: \`${clip(name)}\` is not in the context of this job's runs, which holds ${listNames(roots)} (from ${from})${didYouMean(name, roots)}`,
    }));
}

function conditionProblems(trigger: Trigger & { conditions?: unknown }, where: string): JobProblem[] {
  let compiled: CompiledConditions;
  try {
    compiled = compileConditions(trigger.conditions);
  } catch (err) {
    if (err instanceof ConditionProblem) return [{ code: 'invalid_conditions', message: `\`${where}.conditions\`, ${err.message}` }];
    throw err;
  }
  const roots = CONTEXT_ROOTS[trigger.type];
  const context = `a ${trigger.type} trigger's context, which holds ${listNames(roots)}`;
  const problems: JobProblem[] = [];
  for (const leaf of compiled.leaves) {
    const root = (leaf.parsed.steps[0] as { key: string }).key;
    if (roots.includes(root)) continue;
    const message = `\`${where}.conditions.${leaf.part}[${leaf.index}].path\`: \`${clip(root)}\` is not in ${context}${didYouMean(root, roots)}`;
    problems.push({ code: 'invalid_conditions', message });
  }
  for (const { name, column } of compiled.cel?.variables ?? []) {
    if (roots.includes(name)) continue;
    const message = `\`${where}.conditions.if\`, column ${column}: \`${clip(name)}\` is not declared: a CEL expression reads ${context}${didYouMean(name, roots)}`;
    problems.push({ code: 'invalid_conditions', message });
  }
  return problems;
}

/**
 * Everything of a job that must hold before it is saved: its templates parse and its conditions compile,
 * and both read only what its triggers put in a run's context; every such problem is named in one 400.
 * `saving` says which parts change: an update of other fields is not refused for what was saved before.
 * Answers the compiled input schemas of the triggers being saved, by trigger id.
 */
type JobWorkspace = components['schemas']['JobWorkspace'];

/** The fields of a job's workspace that are templates over the run's context, as its prompt is. */
export const WORKSPACE_TEMPLATES = ['repository', 'ref', 'branch', 'commitMessage', 'pullRequestTitle'] as const;

export function checkJob(
  job: { promptTemplate: string; runNameTemplate?: string | null; triggers: Trigger[]; flowControl?: FlowControl; workspace?: JobWorkspace | null },
  saving: { templates: boolean; triggers: boolean; flowControl?: boolean } = { templates: true, triggers: true, flowControl: true },
): Map<string, ValidateFunction> {
  const problems: JobProblem[] = [];
  const roots = templateRoots(job.triggers);
  if (saving.templates || saving.triggers) {
    problems.push(...templateProblems('promptTemplate', job.promptTemplate, roots));
    if (job.runNameTemplate) problems.push(...templateProblems('runNameTemplate', job.runNameTemplate, roots));
    for (const field of WORKSPACE_TEMPLATES) {
      const source = job.workspace?.[field];
      if (source) problems.push(...templateProblems(`workspace.${field}`, source, roots));
    }
  }
  // A key reads the run's context as the templates do.
  if ((saving.flowControl || saving.triggers) && job.flowControl) {
    problems.push(...flowControlProblems(job.flowControl, roots).map((message) => ({ code: 'invalid_conditions' as const, message })));
  }
  const validators = new Map<string, ValidateFunction>();
  if (saving.triggers) {
    job.triggers.forEach((trigger, index) => {
      const where = `triggers[${index}]`;
      if ((trigger.type === 'webhook' || trigger.type === 'run') && trigger.conditions !== undefined) problems.push(...conditionProblems(trigger, where));
      if (trigger.type === 'invocation' && trigger.inputSchema) validators.set(trigger.id, inputValidator(trigger.inputSchema, `\`${where}.inputSchema\``));
      if (trigger.type === 'schedule') checkSchedule(trigger, where);
      if (trigger.type === 'webhook') checkEvents(trigger.events, where);
    });
  }
  if (problems.length) refuse(problems);
  return validators;
}

/**
 * The chain of jobs that would loop if `jobId` watched `watched` (a run of each starting the next),
 * or null. `edges` are the other run triggers of the tenant: `from` finishing starts `to`.
 */
export function chainLoop(edges: { from: string; to: string }[], jobId: string, watched: string[]): string[] | null {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const targets = new Set(watched);
  // Depth first from the job along "starts": reaching a job it watches closes a loop.
  const stack: string[][] = [[jobId]];
  const seen = new Set<string>();
  while (stack.length) {
    const path = stack.pop()!;
    const at = path[path.length - 1];
    if (targets.has(at)) return [...path, jobId];
    if (seen.has(at)) continue;
    seen.add(at);
    for (const to of next.get(at) ?? []) stack.push([...path, to]);
  }
  return null;
}
