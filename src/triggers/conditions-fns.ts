// Trigger conditions: `{ all, any, none, if }`, compiled once (paths parsed, regular expressions and CEL
// planned) and evaluated against a context into a decision with one detail per leaf. Evaluation fails
// closed: anything that cannot be evaluated is an `error` decision, which never starts a run.
import { isDeepStrictEqual } from 'node:util';
import type { components } from '../../generated/openapi';
import { clip } from '../lib/text';
import { metered, WorkLimitExceeded } from '../lib/work-meter';
import { CelProblem, compileCel, contextSize, type CompiledCel } from './cel-fns';
import { parsePath, select, type ParsedPath } from './condition-paths';
import { compileRegex, type Regex } from './regex';

export type Decision = components['schemas']['ConditionDecision'];
type Detail = Decision['details'][number];

export const OPS = ['eq', 'neq', 'in', 'nin', 'contains', 'startsWith', 'endsWith', 'matches', 'exists', 'gt', 'gte', 'lt', 'lte'] as const;
export type Op = (typeof OPS)[number];
const LEAF_PARTS = ['all', 'any', 'none'] as const;
type LeafPart = (typeof LEAF_PARTS)[number];
const MAX_LEAVES = 50;
const MAX_PATH = 500;
const MAX_CEL = 4000;

interface Leaf {
  part: LeafPart;
  index: number;
  path: string;
  op: Op;
  value: unknown;
  parsed: ParsedPath;
  /** One value's test; a path with `[*]` holds when it holds for at least one value. */
  test: (actual: unknown) => boolean;
}

export interface CompiledConditions {
  leaves: Leaf[];
  cel: CompiledCel | null;
}

/** A condition that cannot be compiled: the message names the part, and `detail` is the failing leaf. */
export class ConditionProblem extends Error {
  constructor(
    message: string,
    readonly detail: Detail,
  ) {
    super(message);
  }
}

const isNumberOrString = (value: unknown): value is number | string => typeof value === 'number' || typeof value === 'string';

/** Ordered comparison of two numbers or two strings (ISO 8601 timestamps compare as strings); other pairs never hold. */
function compare(actual: unknown, expected: number | string, holds: (order: number) => boolean): boolean {
  if (typeof actual !== typeof expected || !isNumberOrString(actual)) return false;
  return holds(actual < expected ? -1 : actual > expected ? 1 : 0);
}

/** The test of one operator against its operand, or a problem with the operand. */
function testFor(op: Op, value: unknown): ((actual: unknown) => boolean) | string {
  switch (op) {
    case 'eq':
      return (actual) => isDeepStrictEqual(actual, value);
    case 'neq':
      return (actual) => !isDeepStrictEqual(actual, value);
    case 'in':
    case 'nin': {
      if (!Array.isArray(value)) return `\`${op}\` needs an array value`;
      const inside = (actual: unknown) => value.some((item) => isDeepStrictEqual(item, actual));
      return op === 'in' ? inside : (actual) => !inside(actual);
    }
    case 'contains':
      return (actual) =>
        (typeof actual === 'string' && typeof value === 'string' && actual.includes(value)) || (Array.isArray(actual) && actual.some((item) => isDeepStrictEqual(item, value)));
    case 'startsWith':
    case 'endsWith': {
      if (typeof value !== 'string') return `\`${op}\` needs a string value`;
      return (actual) => typeof actual === 'string' && (op === 'startsWith' ? actual.startsWith(value) : actual.endsWith(value));
    }
    case 'matches': {
      // RE2, its program bounded at compile and each match charged to the evaluation's meter (regex.ts).
      if (typeof value !== 'string') return '`matches` needs a regular expression as a string value';
      let pattern: Regex;
      try {
        pattern = compileRegex(value);
      } catch (err) {
        return `the regular expression is refused (RE2 runs in linear time and has no backreferences or lookaround): ${(err as Error).message}`;
      }
      return (actual) => typeof actual === 'string' && pattern.test(actual);
    }
    case 'exists':
      if (value !== undefined && typeof value !== 'boolean') return '`exists` takes true, false or no value';
      return () => true;
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      if (!isNumberOrString(value)) return `\`${op}\` needs a number or a string value`;
      const holds = { gt: (o: number) => o > 0, gte: (o: number) => o >= 0, lt: (o: number) => o < 0, lte: (o: number) => o <= 0 }[op];
      return (actual) => compare(actual, value, holds);
    }
  }
}

function compileLeaf(part: LeafPart, index: number, raw: unknown): Leaf {
  const where = `${part}[${index}]`;
  const leaf = (raw ?? {}) as Record<string, unknown>;
  const detail: Detail = { part, index, path: leaf.path, op: leaf.op, expected: leaf.value, result: false };
  const fail = (message: string) => new ConditionProblem(`${where}: ${message}`, detail);
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw fail('a condition must be an object { path, op, value }');
  const unknown = Object.keys(leaf).find((key) => !['path', 'op', 'value'].includes(key));
  if (unknown) throw fail(`unknown property \`${clip(unknown)}\``);
  if (typeof leaf.path !== 'string' || leaf.path.length === 0 || leaf.path.length > MAX_PATH) throw fail(`\`path\` must be a string of 1 to ${MAX_PATH} characters`);
  const parsed = parsePath(leaf.path);
  if (!parsed) throw fail(`bad path "${leaf.path}": use dotted names with [n] or [*], e.g. payload.issue.labels[*].name`);
  if (!OPS.includes(leaf.op as Op)) throw fail(`unknown op ${clip(String(JSON.stringify(leaf.op)))}; use one of ${OPS.join(', ')}`);
  const test = testFor(leaf.op as Op, leaf.value);
  if (typeof test === 'string') throw fail(test);
  return { part, index, path: leaf.path, op: leaf.op as Op, value: leaf.value, parsed, test };
}

/**
 * Compiles conditions as sent (loosely typed JSON); throws ConditionProblem naming the offending part.
 * Compiling their regular expressions is charged to one work meter (regex.ts).
 */
export const compileConditions = (raw: unknown): CompiledConditions => metered(() => compileParts(raw));

function compileParts(raw: unknown): CompiledConditions {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new ConditionProblem('conditions must be an object { all, any, none, if }', { part: 'conditions', result: false });
  const conditions = raw as Record<string, unknown>;
  const unknown = Object.keys(conditions).find((key) => ![...LEAF_PARTS, 'if'].includes(key));
  if (unknown) throw new ConditionProblem(`unknown part \`${clip(unknown)}\`; use all, any, none and if`, { part: clip(unknown), result: false });
  const leaves: Leaf[] = [];
  for (const part of LEAF_PARTS) {
    const items = conditions[part];
    if (items === undefined) continue;
    if (!Array.isArray(items) || items.length > MAX_LEAVES) throw new ConditionProblem(`${part}: must be an array of at most ${MAX_LEAVES} conditions`, { part, result: false });
    items.forEach((item, index) => leaves.push(compileLeaf(part, index, item)));
  }
  const expression = conditions.if;
  if (expression === undefined) return { leaves, cel: null };
  const detail: Detail = { part: 'if', expected: expression, result: false };
  if (typeof expression !== 'string' || expression.length === 0 || expression.length > MAX_CEL) throw new ConditionProblem(`if: must be a CEL expression of 1 to ${MAX_CEL} characters`, detail);
  try {
    return { leaves, cel: compileCel(expression) };
  } catch (err) {
    if (err instanceof CelProblem) throw new ConditionProblem(`if: ${err.message}`, detail);
    throw err;
  }
}

function evaluateLeaf(leaf: Leaf, context: unknown): Detail {
  const found = select(context, leaf.parsed);
  const actual = leaf.parsed.many ? { actual: found } : found.length ? { actual: found[0] } : {};
  const expectsAbsence = leaf.op === 'exists' && leaf.value === false;
  const result = expectsAbsence ? found.length === 0 : found.some(leaf.test);
  return { part: leaf.part, path: leaf.path, op: leaf.op, expected: leaf.value ?? (leaf.op === 'exists' ? true : undefined), ...actual, result };
}

/**
 * Every leaf evaluated (so that every detail shows), then `if`; all present parts must hold. `size` is the
 * context's (cel-fns.ts `contextSize`), counted once by a caller deciding many triggers on one context.
 */
export function evaluateConditions({ leaves, cel }: CompiledConditions, context: Record<string, unknown>, size?: number): Decision {
  let details: Detail[];
  try {
    // `matches` is charged to a work meter (regex.ts): long texts under large patterns end in an error.
    details = metered(() => leaves.map((leaf) => evaluateLeaf(leaf, context)));
  } catch (err) {
    if (err instanceof WorkLimitExceeded) return { decision: 'error', error: `conditions: ${err.message}`, details: [] };
    throw err;
  }
  const of = (part: LeafPart) => details.filter((detail) => detail.part === part);
  const any = of('any');
  let holds = of('all').every((d) => d.result) && (any.length === 0 || any.some((d) => d.result)) && of('none').every((d) => !d.result);
  if (cel) {
    const outcome = cel.evaluate(context, size ?? contextSize(context));
    const detail: Detail = { part: 'if', expected: cel.expression, ...('value' in outcome ? { actual: outcome.value } : {}), result: outcome.ok && outcome.value };
    if (!outcome.ok) return { decision: 'error', error: outcome.error, details: [detail] };
    details.push(detail);
    holds &&= outcome.value;
  }
  return { decision: holds ? 'match' : 'no-match', details };
}

const COMPILED_KEPT = 500;
const compiledByText = new Map<string, CompiledConditions | ConditionProblem>();

/**
 * Compiles once per distinct text: an editor tries the same conditions against one sample after another,
 * and compiling (CEL parse and plan, regular expressions) costs several times the evaluation.
 */
function compiledOnce(conditions: unknown): CompiledConditions {
  const text = JSON.stringify(conditions);
  let entry = compiledByText.get(text);
  if (!entry) {
    try {
      entry = compileConditions(conditions);
    } catch (err) {
      if (!(err instanceof ConditionProblem)) throw err;
      entry = err;
    }
    if (compiledByText.size >= COMPILED_KEPT) compiledByText.delete(compiledByText.keys().next().value!);
    compiledByText.set(text, entry);
  }
  if (entry instanceof ConditionProblem) throw entry;
  return entry;
}

/** Saved conditions made ready once: compiled, none, or the problem every evaluation reports. */
export type Prepared = CompiledConditions | ConditionProblem | null;

export function prepareConditions(conditions: unknown): Prepared {
  if (conditions === undefined) return null;
  try {
    return compiledOnce(conditions);
  } catch (err) {
    if (err instanceof ConditionProblem) return err;
    throw err;
  }
}

/** The decision of prepared conditions: none match, and conditions that do not compile are an `error` naming the part. */
export function decidePrepared(prepared: Prepared, context: Record<string, unknown>, size?: number): Decision {
  if (prepared === null) return { decision: 'match', details: [] };
  if (prepared instanceof ConditionProblem) return { decision: 'error', error: prepared.message, details: [prepared.detail] };
  return evaluateConditions(prepared, context, size);
}

/** The test endpoint's answer: conditions that do not compile are an `error` decision naming the part. */
export function decide(conditions: unknown, context: Record<string, unknown>): Decision {
  if (conditions === undefined) return { decision: 'match', details: [] };
  try {
    return evaluateConditions(compiledOnce(conditions), context);
  } catch (err) {
    if (err instanceof ConditionProblem) return { decision: 'error', error: err.message, details: [err.detail] };
    throw err;
  }
}
