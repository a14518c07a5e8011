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

export const KEY_FIELD = '`flowControl.concurrency.key`';

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
const TTL_RANGE_MS = [1000, 7 * UNIT_MS.D] as const;

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

/** Why the flow control cannot be saved for runs whose context holds `roots` (what the job's triggers give). */
export function flowControlProblems(flowControl: FlowControl, { roots, from }: { roots: string[]; from: string }): string[] {
  if (flowControl.ttl !== undefined) {
    const ms = durationMs(flowControl.ttl);
    if (ms === null || ms < TTL_RANGE_MS[0] || ms > TTL_RANGE_MS[1]) throw new ValidationFailed(`\`flowControl.ttl\` "${clip(flowControl.ttl)}" must be a duration from 1 second to 7 days (PT30S, 30s, 5m, 2h, 1d).`);
  }
  const key = flowControl.concurrency?.key;
  if (key === undefined) return [];
  let compiled: CompiledCel;
  try {
    compiled = compileCel(key);
  } catch (err) {
    if (err instanceof CelProblem) return [`${KEY_FIELD} ${err.message}`];
    throw err;
  }
  return compiled.variables
    .filter(({ name }) => !roots.includes(name))
    .map(({ name, column }) => {
      const near = closestName(name, roots);
      return `${KEY_FIELD}, column ${column}: \`${clip(name)}\` is not in the context of this job's runs, which holds ${listNames(roots)} (from ${from})${near ? ` (did you mean \`${near}\`?)` : ''}`;
    });
}

/** A key as stored: the value's JSON, or its hash when long, so that equal values give equal keys. */
const MAX_KEY = 200;

/** The concurrency key of a run with `context` (null: the whole job is one key), or why there is none. */
export function concurrencyKeyOf(key: CompiledCel | null, context: Record<string, unknown>): { ok: true; key: string | null } | { ok: false; error: string } {
  if (!key) return { ok: true, key: null };
  const outcome = key.valueOf(context, contextSize(context));
  if (!outcome.ok) return { ok: false, error: `${KEY_FIELD}: ${outcome.error}` };
  const { value } = outcome;
  if (!['string', 'number', 'boolean'].includes(typeof value)) {
    return { ok: false, error: `${KEY_FIELD} must give a string, number or boolean; it gave ${value === null ? 'null' : Array.isArray(value) ? 'a list' : 'a map'}` };
  }
  const text = JSON.stringify(value);
  return { ok: true, key: text.length > MAX_KEY ? `sha256:${sha256(text)}` : text };
}
