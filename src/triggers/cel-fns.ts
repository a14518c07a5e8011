// The `if` part of conditions: a CEL expression, parsed and planned once by @bufbuild/cel (never eval),
// evaluated against a context whose top-level fields are its variables, under a cost limit.
import type * as CelLibrary from '@bufbuild/cel';
import type { CelResult } from '@bufbuild/cel';
import { lruFor } from '../lib/lru';
import { clip, listNames } from '../lib/text';
import { metered, WorkLimitExceeded } from '../lib/work-meter';
import { meteredStringFuncs } from './cel-metered-funcs';
import { compileRegex, type Regex } from './regex';

/**
 * Evaluations whose estimated cost exceeds this are refused before they run (the estimate counts calls; what
 * a call does with a long string is charged as it runs, to a work meter: cel-metered-funcs.ts).
 */
export const CEL_COST_LIMIT = 1_000_000;
const MAX_NODES = 1000;

/**
 * The library and its environment, loaded with the first expression: it holds about 15 MB, which a
 * server whose jobs use no CEL never needs. CEL's `matches()` runs on RE2 too: linear time whatever the pattern.
 */
let loaded: { cel: typeof CelLibrary; env: ReturnType<typeof CelLibrary.celEnv> } | undefined;
function celLibrary() {
  if (!loaded) {
    const cel = require('@bufbuild/cel') as typeof CelLibrary;
    loaded = { cel, env: cel.celEnv({ re2: { compile: compiledPattern }, funcs: meteredStringFuncs(cel) }) };
  }
  return loaded;
}

// The library compiles a `matches()` pattern at every call: the last ones are kept compiled (or refused).
const patterns = lruFor<Regex | Error>({ max: 200, maxWeight: 200_000, weigh: (pattern) => pattern.length });
function compiledPattern(pattern: string): Regex {
  const entry = patterns.get(pattern, () => {
    try {
      return compileRegex(pattern);
    } catch (err) {
      if (err instanceof WorkLimitExceeded) throw err; // this evaluation's budget, not the pattern's fault
      return err as Error;
    }
  });
  if (entry instanceof Error) throw entry;
  return entry;
}

export class CelProblem extends Error {}

/**
 * The cost of an expression as a polynomial in the size of the context (`coefficients[k]` × size^k): a
 * comprehension (`all`, `exists`, `map`, `filter`…) may run its body once per value of the context.
 */
type Cost = number[];

const add = (a: Cost, b: Cost): Cost => Array.from({ length: Math.max(a.length, b.length) }, (_, k) => (a[k] ?? 0) + (b[k] ?? 0));
const timesSize = (a: Cost): Cost => [0, ...a];

interface Node {
  id?: number | bigint;
  exprKind?: { case?: string; value?: Record<string, unknown> };
}

/** The sub-expressions of a node, wherever the AST keeps them (arguments, targets, list items, map entries). */
function children(value: unknown, found: Node[] = []): Node[] {
  if (Array.isArray(value)) value.forEach((item) => children(item, found));
  else if (value && typeof value === 'object') {
    if ('exprKind' in value) found.push(value as Node);
    else for (const inner of Object.values(value)) children(inner, found);
  }
  return found;
}

function costOf(node: Node, counted: { nodes: number }): Cost {
  counted.nodes += 1;
  if (counted.nodes > MAX_NODES) throw new CelProblem(`the expression is too large (more than ${MAX_NODES} nodes)`);
  const kind = node.exprKind?.case;
  const value = node.exprKind?.value ?? {};
  if (kind === 'comprehensionExpr') {
    const part = (name: string) => (value[name] ? costOf(value[name] as Node, counted) : [0]);
    const perElement = add(part('loopCondition'), part('loopStep'));
    return [part('iterRange'), part('accuInit'), part('result'), timesSize(perElement), [1]].reduce(add);
  }
  return children(value).reduce((sum, child) => add(sum, costOf(child, counted)), [1] as Cost);
}

/** CEL's own names of types, which an expression may use as values (`type(x) == string`). */
const TYPE_NAMES = new Set(['bool', 'bytes', 'double', 'int', 'uint', 'string', 'list', 'map', 'null_type', 'type', 'dyn']);

/** A name the expression reads from its context, and the column (1-based) where it is first read. */
export interface CelVariable {
  name: string;
  column: number;
}

/**
 * The names an expression reads from its context (its identifiers, less the variables of its own macros:
 * `all`, `exists`, …), and the paths it selects from them as far as they are written out (`payload.issue.title`).
 * `rootOf` gives, by node id, the name each identifier and selection starts from: an evaluation error at one of
 * them is that name missing from the context.
 */
function readsOf(expr: Node, positions: Record<string, number>): { variables: CelVariable[]; paths: string[][]; rootOf: Map<string, CelVariable> } {
  const found = new Map<string, number>();
  const paths = new Map<string, string[]>();
  const rootOf = new Map<string, CelVariable>();
  const columnOf = (node: Node) => (positions[String(node.id)] ?? 0) + 1;
  const walk = (node: Node | undefined, bound: ReadonlySet<string>): void => {
    if (!node) return;
    const kind = node.exprKind?.case;
    const value = node.exprKind?.value ?? {};
    if (kind === 'identExpr') {
      const name = value.name as string;
      if (bound.has(name) || TYPE_NAMES.has(name)) return;
      if (!found.has(name)) found.set(name, columnOf(node));
      rootOf.set(String(node.id), { name, column: columnOf(node) });
    } else if (kind === 'selectExpr') {
      // The whole chain `a.b.c` at once: its fields, then what it selects from.
      const fields: string[] = [];
      const chain: Node[] = [];
      let inner: Node | undefined = node;
      while (inner?.exprKind?.case === 'selectExpr') {
        chain.push(inner);
        fields.unshift(inner.exprKind.value!.field as string);
        inner = inner.exprKind.value!.operand as Node | undefined;
      }
      const root = inner?.exprKind?.case === 'identExpr' ? (inner.exprKind.value!.name as string) : null;
      if (root !== null && !bound.has(root)) {
        paths.set([root, ...fields].join('.'), [root, ...fields]);
        for (const link of chain) rootOf.set(String(link.id), { name: root, column: columnOf(inner!) });
      }
      walk(inner, bound);
    } else if (kind === 'comprehensionExpr') {
      walk(value.iterRange as Node, bound);
      walk(value.accuInit as Node, bound);
      const inner = new Set([...bound, value.iterVar as string, value.iterVar2 as string, value.accuVar as string]);
      for (const part of ['loopCondition', 'loopStep', 'result']) walk(value[part] as Node, inner);
    } else for (const child of children(value)) walk(child, bound);
  };
  walk(expr, new Set());
  return { variables: [...found].map(([name, column]) => ({ name, column })), paths: [...paths.values()], rootOf };
}

const evaluateCost = (cost: Cost, size: number) => cost.reduce((sum, coefficient, k) => sum + coefficient * size ** k, 0);

/** How many values a context holds (objects, arrays and scalars), counted up to a cap. */
export function contextSize(context: unknown, cap = CEL_COST_LIMIT): number {
  let count = 0;
  const stack = [context];
  while (stack.length && count <= cap) {
    const value = stack.pop();
    count += 1;
    if (value && typeof value === 'object') stack.push(...Object.values(value));
  }
  return count;
}

export type CelOutcome = { ok: true; value: boolean } | { ok: false; error: string; value?: unknown };

export interface CompiledCel {
  expression: string;
  /** What it reads from the context; an evaluation that fails for want of one of them names it. */
  variables: CelVariable[];
  /** The paths it selects from the context, as written (`payload.issue.title`). */
  paths: string[][];
  evaluate(context: Record<string, unknown>, size: number): CelOutcome;
  /** The expression's value over `context`, as plain JSON (a timestamp or duration has none: an error). */
  valueOf(context: Record<string, unknown>, size: number): { ok: true; value: unknown } | { ok: false; error: string };
}

const MAX_PLAIN_DEPTH = 32;

/**
 * A CEL value as plain JSON, to show as a detail's `actual`: ints and uints as numbers, bytes as base64,
 * lists and maps as arrays and objects. Anything else (a timestamp, a duration) has no plain form: undefined.
 */
function plainValue(value: unknown, depth = 0): unknown {
  const { cel } = celLibrary();
  if (depth > MAX_PLAIN_DEPTH) return undefined;
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'bigint') return Number(value);
  if (cel.isCelUint(value)) return Number(value.value);
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (cel.isCelList(value)) return [...value].map((item) => plainValue(item, depth + 1) ?? null);
  if (cel.isCelMap(value)) return Object.fromEntries([...value].map(([key, item]) => [String(plainValue(key, depth + 1)), plainValue(item, depth + 1) ?? null]));
  return undefined;
}

/** Why CEL refused, with the fix for the mistake everybody makes once: JSON numbers are doubles. */
function explain(error: { message: string }): string {
  const hint = /overload/.test(error.message) && /double/.test(error.message) ? ' (JSON numbers are doubles in CEL: write 1.0, not 1)' : '';
  return `${error.message}${hint}`;
}

/** Parses and plans `expression`; throws CelProblem for a syntax error or an expression too large. */
export function compileCel(expression: string): CompiledCel {
  const { cel, env } = celLibrary();
  let parsed: ReturnType<typeof cel.parse>;
  try {
    parsed = cel.parse(expression);
  } catch (err) {
    throw new CelProblem(`CEL parse error: ${(err as Error).message}`);
  }
  const cost = costOf(parsed.expr as Node, { nodes: 0 });
  const { variables, paths, rootOf } = readsOf(parsed.expr as Node, (parsed.sourceInfo?.positions ?? {}) as Record<string, number>);
  const run = cel.plan(env, parsed) as (bindings: Record<string, unknown>) => CelResult;
  return {
    expression,
    variables,
    paths,
    evaluate(context, size) {
      const result = evaluateRaw(context, size);
      if (!result.ok) return result;
      if (typeof result.value !== 'boolean') {
        const value = plainValue(result.value);
        return { ok: false, error: 'the `if` expression must evaluate to a boolean', ...(value === undefined ? {} : { value }) };
      }
      return { ok: true, value: result.value };
    },
    valueOf(context, size) {
      const result = evaluateRaw(context, size);
      if (!result.ok) return result;
      const value = plainValue(result.value);
      return value === undefined ? { ok: false, error: 'the expression\'s value has no JSON form (a timestamp or duration: convert it with string())' } : { ok: true, value };
    },
  };

  /**
   * The expression's CEL value over `context`, or why there is none. A name the context lacks is an error only
   * where it is read: as in CEL, `x || true` is true, an error absorbed by `||`.
   */
  function evaluateRaw(context: Record<string, unknown>, size: number): { ok: true; value: unknown } | { ok: false; error: string } {
    if (evaluateCost(cost, size) > CEL_COST_LIMIT) return { ok: false, error: `CEL cost limit exceeded: the expression would do more than ${CEL_COST_LIMIT} steps over this context` };
    let result: CelResult;
    try {
      result = metered(() => run(context));
    } catch (err) {
      if (err instanceof WorkLimitExceeded) return { ok: false, error: `CEL work limit exceeded: ${err.message}` };
      throw err;
    }
    if (!cel.isCelError(result)) return { ok: true, value: result };
    const missing = result.exprId === undefined ? undefined : rootOf.get(String(result.exprId));
    if (missing && !Object.prototype.hasOwnProperty.call(context, missing.name)) {
      return { ok: false, error: `CEL: \`${clip(missing.name)}\` (column ${missing.column}) is not in the context, whose names are ${listNames(Object.keys(context))}` };
    }
    return { ok: false, error: `CEL evaluation error: ${explain(result)}` };
  }
}
