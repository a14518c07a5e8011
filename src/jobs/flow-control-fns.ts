// A job's flow control as data: how an update merges into it, what must hold at save (its CEL key reads
// only what the job's runs hold), and the key a run's context gives. What the run engine does with a key
// is the runs domain's (runs-fns.ts).
import type { components } from '../../generated/openapi';
import { ValidationFailed } from '../lib/errors';
import { sha256 } from '../lib/hash';
import { clip, closestName, listNames } from '../lib/text';
import { CelProblem, compileCel, contextSize, type CompiledCel } from '../triggers/cel-fns';

export type FlowControl = components['schemas']['JobFlowControl'];
type FlowControlUpdate = components['schemas']['JobFlowControlUpdate'];
export type Concurrency = components['schemas']['ConcurrencyControl'];
export type RateLimit = components['schemas']['RateLimitControl'];
export type Debounce = components['schemas']['DebounceControl'];

/** The parts of a job's flow control that take a key, by name. */
export const KEYED_PARTS = ['concurrency', 'rateLimit', 'debounce'] as const;
export type KeyedPart = (typeof KEYED_PARTS)[number];

const keyField = (part: KeyedPart) => `\`flowControl.${part}.key\``;

/** The flow control an update leads to: parts sent replace, parts sent as null go, null clears it all. */
export function mergeFlowControl(saved: FlowControl, patch: FlowControlUpdate | null): FlowControl {
  if (patch === null) return {};
  const merged: Record<string, unknown> = { ...saved };
  for (const [part, value] of Object.entries(patch)) {
    if (value === null) delete merged[part];
    else merged[part] = value;
  }
  return merged as FlowControl;
}

const UNIT_MS = { S: 1000, M: 60_000, H: 3_600_000, D: 86_400_000 } as const;
/** What a duration of each part may be. */
const RANGES = { ttl: [1000, 7 * UNIT_MS.D, '1 second to 7 days'], period: [1000, UNIT_MS.D, '1 second to 24 hours'], debounce: [1000, UNIT_MS.H, '1 second to 1 hour'] } as const;

/** Refuses a duration that is not one, or out of its range, naming its field. */
function checkDuration(field: string, text: string | undefined, [min, max, range]: readonly [number, number, string]) {
  if (text === undefined) return;
  const ms = durationMs(text);
  if (ms === null || ms < min || ms > max) throw new ValidationFailed(`\`${field}\` "${clip(text)}" must be a duration from ${range} (PT30S, 30s, 5m, 2h, 1d).`);
}

/** A duration (`PT1H30M`, `P1D`, `30s`, `5m`) in milliseconds; null when it is not one. */
export function durationMs(text: string): number | null {
  const short = /^(\d+)([smhd])$/.exec(text);
  if (short) return Number(short[1]) * UNIT_MS[short[2].toUpperCase() as keyof typeof UNIT_MS];
  const iso = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/.exec(text);
  if (!iso || text === 'P' || text.endsWith('T')) return null;
  const [, d = '0', h = '0', m = '0', sec = '0'] = iso;
  return Number(d) * UNIT_MS.D + Number(h) * UNIT_MS.H + Number(m) * UNIT_MS.M + Number(sec) * UNIT_MS.S;
}

/** How long a run of the job may wait in `queued` (flowControl.ttl), or null. */
export const ttlMs = (flowControl: FlowControl | null | undefined): number | null => (flowControl?.ttl ? durationMs(flowControl.ttl) : null);

/** How long the window of the job's rate limit is, or null without one. */
export const periodMs = (flowControl: FlowControl | null | undefined): number | null => (flowControl?.rateLimit ? durationMs(flowControl.rateLimit.period) : null);

/** A debounce's period and its bound in milliseconds (no maxWait: no bound). */
export const debounceMs = ({ period, maxWait }: Debounce) => ({ periodMs: durationMs(period)!, maxWaitMs: maxWait ? durationMs(maxWait)! : Infinity });

/** Why the flow control cannot be saved for runs whose context holds `roots` (what the job's triggers give). */
export function flowControlProblems(flowControl: FlowControl, { roots, from }: { roots: string[]; from: string }): string[] {
  checkDuration('flowControl.ttl', flowControl.ttl, RANGES.ttl);
  checkDuration('flowControl.rateLimit.period', flowControl.rateLimit?.period, RANGES.period);
  checkDuration('flowControl.retry.backoff.initial', flowControl.retry?.backoff?.initial, RANGES.period);
  checkDuration('flowControl.retry.backoff.max', flowControl.retry?.backoff?.max, RANGES.period);
  checkDuration('flowControl.debounce.period', flowControl.debounce?.period, RANGES.debounce);
  checkDuration('flowControl.debounce.maxWait', flowControl.debounce?.maxWait, RANGES.period);
  const { period, maxWait } = flowControl.debounce ?? {};
  if (period && maxWait && durationMs(maxWait)! < durationMs(period)!) throw new ValidationFailed('`flowControl.debounce.maxWait` must be at least `period`.');
  return KEYED_PARTS.flatMap((part) => {
    const key = flowControl[part]?.key;
    if (key === undefined) return [];
    let compiled: CompiledCel;
    try {
      compiled = compileCel(key);
    } catch (err) {
      if (err instanceof CelProblem) return [`${keyField(part)} ${err.message}`];
      throw err;
    }
    return compiled.variables
      .filter(({ name }) => !roots.includes(name))
      .map(({ name, column }) => {
        const near = closestName(name, roots);
        return `${keyField(part)}, column ${column}: \`${clip(name)}\` is not in the context of this job's runs, which holds ${listNames(roots)} (from ${from})${near ? ` (did you mean \`${near}\`?)` : ''}`;
      });
  });
}

/** A key as stored: the value's JSON, or its hash when long, so that equal values give equal keys. */
const MAX_KEY = 200;

export type CompiledKeys = Record<KeyedPart, CompiledCel | null>;

/**
 * Each keyed part's key, compiled (null: the part is unset, or keyless and so the whole job); a key that
 * does not compile throws CelProblem naming its field.
 */
export function compileKeys(flowControl: FlowControl): CompiledKeys {
  const compiled = (part: KeyedPart, key: string) => {
    try {
      return compileCel(key);
    } catch (err) {
      throw err instanceof CelProblem ? new CelProblem(`${keyField(part)} ${err.message}`) : err;
    }
  };
  return Object.fromEntries(KEYED_PARTS.map((part) => [part, flowControl[part]?.key ? compiled(part, flowControl[part]!.key!) : null])) as CompiledKeys;
}

/** The key each of `parts` the job sets gives a run with `context`, or the first part's error. */
export function runKeys(
  flowControl: FlowControl,
  compiled: CompiledKeys,
  context: Record<string, unknown>,
  parts: readonly KeyedPart[] = KEYED_PARTS,
): { ok: true; keys: Partial<Record<KeyedPart, string | null>> } | { ok: false; error: string } {
  const keys: Partial<Record<KeyedPart, string | null>> = {};
  for (const part of parts) {
    if (!flowControl[part]) continue;
    const outcome = keyOf(part, compiled[part], context);
    if (!outcome.ok) return outcome;
    keys[part] = outcome.key;
  }
  return { ok: true, keys };
}

/**
 * What a condition test shows of flow control: the key each keyed part gives a run with `context`, or why
 * one cannot be worked out (a key that does not compile says so too, as a test is sent unsaved drafts).
 */
export function testedKeys(flowControl: FlowControl, context: Record<string, unknown>): { keys: Partial<Record<KeyedPart, string | null>> } | { error: string } {
  let compiled: CompiledKeys;
  try {
    compiled = compileKeys(flowControl);
  } catch (err) {
    if (err instanceof CelProblem) return { error: err.message };
    throw err;
  }
  const outcome = runKeys(flowControl, compiled, context);
  return outcome.ok ? { keys: outcome.keys } : { error: outcome.error };
}

/** The key of `part` for a run with `context` (null: the whole job is one key), or why there is none. */
export function keyOf(part: KeyedPart, key: CompiledCel | null, context: Record<string, unknown>): { ok: true; key: string | null } | { ok: false; error: string } {
  if (!key) return { ok: true, key: null };
  return celKey(keyField(part), key, context);
}

/** The value a compiled key expression (`field` names it) gives a run with `context`, as text, or why there is none. */
export function celKey(field: string, key: CompiledCel, context: Record<string, unknown>): { ok: true; key: string } | { ok: false; error: string } {
  // A tenant's CEL over the run's context: bounded by its cost limit and work meter (cel-fns.ts).
  const outcome = key.valueOf(context, contextSize(context));
  if (!outcome.ok) return { ok: false, error: `${field}: ${outcome.error}` };
  const { value } = outcome;
  if (!['string', 'number', 'boolean'].includes(typeof value)) {
    return { ok: false, error: `${field} must give a string, number or boolean; it gave ${value === null ? 'null' : Array.isArray(value) ? 'a list' : 'a map'}` };
  }
  const text = JSON.stringify(value);
  return { ok: true, key: text.length > MAX_KEY ? `sha256:${sha256(text)}` : text };
}
