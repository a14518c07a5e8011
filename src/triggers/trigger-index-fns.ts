// A source's webhook triggers indexed once, so that a delivery evaluates only those that could decide
// anything but a miss: by exact event name (triggers with a `*` pattern are matched one by one), and by one
// literal their `all` part requires at a path (`eq`, `in`), which the delivery's value there must equal.
// A trigger skipped for its literal is certain to be a miss, so the decisions are those of a full scan. Its
// `if` would still be evaluated by a full scan, and an `if` that fails makes the decision an error: a
// skipped trigger with one is evaluated after all when its expression fails on the delivery (each distinct
// expression is tried once per delivery). One whose leaves could end in an error (`matches`, conditions
// that do not compile) is never skipped.
import { contextSize, type CompiledCel } from './cel-fns';
import { ConditionProblem, type CompiledConditions, type Prepared } from './conditions-fns';
import { select, type ParsedPath } from './condition-paths';
import { matchesEvents } from './event-patterns-fns';

/** What the index reads of a trigger: its event patterns and its conditions, made ready once. */
export interface Indexable {
  events: string[];
  conditions: Prepared;
}

/** The candidates a delivery must evaluate, in their order, and how many candidates' events match its name. */
export interface Visit<T> {
  candidates: T[];
  /** The events-matching candidates left out are misses: they are counted, never evaluated. */
  eventsMatched: number;
}

export interface TriggerIndex<T> {
  candidatesFor(name: string, context: Record<string, unknown>): Visit<T>;
}

type Leaf = CompiledConditions['leaves'][number];

/** Triggers listening to one event name (or those with `*` patterns), by position in the source's list. */
interface Group {
  members: number;
  /** Evaluated whatever the delivery holds. */
  always: number[];
  /** Per indexed path, the triggers wanting each literal there. */
  byPath: Map<string, { parsed: ParsedPath; byLiteral: Map<string, number[]> }>;
  /** The indexed triggers with an `if`, by its expression: evaluated when it fails on the delivery. */
  byExpression: Map<string, { cel: CompiledCel; positions: number[] }>;
}

/**
 * One key for values `isDeepStrictEqual` holds equal (the test of `eq` and `in`), typed so that `1` and `"1"`
 * differ; 0 and -0 share one, which only widens a bucket. Objects and arrays are not indexed (undefined).
 */
function literalKey(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return `s${value}`;
    case 'number':
      return `n${value}`;
    case 'boolean':
      return String(value);
    default:
      return value === null ? 'null' : undefined;
  }
}

/** The literals an `eq` or `in` leaf of `all` wants, or null when it is not such a leaf or wants an object. */
function literalsOf(leaf: Leaf): string[] | null {
  if (leaf.part !== 'all' || (leaf.op !== 'eq' && leaf.op !== 'in')) return null;
  const keys = (leaf.op === 'eq' ? [leaf.value] : (leaf.value as unknown[])).map(literalKey);
  return keys.every((key) => key !== undefined) ? [...new Set(keys as string[])] : null;
}

/** The leaf a trigger is indexed under with its literals (and its `if`), or null when it is evaluated for every delivery. */
function indexedLeaf(conditions: Prepared): { leaf: Leaf; literals: string[]; cel: CompiledCel | null } | null {
  // A failing `all` leaf does not stop an error: `matches` may exhaust the work meter.
  if (conditions === null || conditions instanceof ConditionProblem) return null;
  if (conditions.leaves.some((leaf) => leaf.op === 'matches')) return null;
  for (const leaf of conditions.leaves) {
    const literals = literalsOf(leaf);
    if (literals) return { leaf, literals, cel: conditions.cel };
  }
  return null;
}

const push = <K, V>(map: Map<K, V[]>, key: K, item: V) => (map.get(key) ?? map.set(key, []).get(key)!).push(item);

function add(group: Group, position: number, indexed: ReturnType<typeof indexedLeaf>) {
  group.members++;
  if (!indexed) return void group.always.push(position);
  const { path, parsed } = indexed.leaf;
  const byLiteral = group.byPath.get(path)?.byLiteral ?? group.byPath.set(path, { parsed, byLiteral: new Map() }).get(path)!.byLiteral;
  for (const literal of indexed.literals) push(byLiteral, literal, position);
  const { cel } = indexed;
  if (cel) (group.byExpression.get(cel.expression) ?? group.byExpression.set(cel.expression, { cel, positions: [] }).get(cel.expression)!).positions.push(position);
}

/** What one delivery's visit reads once: each indexed path's values, each expression's failure, the context's size. */
interface Reading {
  context: Record<string, unknown>;
  selected: Map<string, unknown[]>;
  fails: Map<string, boolean>;
  size?: number;
}

/** A group's triggers the delivery must evaluate, unordered, some perhaps twice. */
function visitedIn(group: Group, reading: Reading): number[] {
  const { context, selected, fails } = reading;
  const positions = [...group.always];
  for (const [expression, { cel, positions: withIt }] of group.byExpression) {
    let failing = fails.get(expression);
    if (failing === undefined) fails.set(expression, (failing = !cel.evaluate(context, (reading.size ??= contextSize(context))).ok));
    if (failing) positions.push(...withIt);
  }
  for (const [path, { parsed, byLiteral }] of group.byPath) {
    const values = selected.get(path) ?? selected.set(path, select(context, parsed)).get(path)!;
    for (const value of values) {
      const key = literalKey(value);
      const wanting = key === undefined ? undefined : byLiteral.get(key);
      if (wanting) positions.push(...wanting);
    }
  }
  return positions;
}

const newGroup = (): Group => ({ members: 0, always: [], byPath: new Map(), byExpression: new Map() });

/** The index of a source's candidates, taken in their order (which the answers keep). */
export function indexTriggers<T extends Indexable>(candidates: T[]): TriggerIndex<T> {
  const byName = new Map<string, Group>();
  const globbed: number[] = [];
  const globGroup = newGroup();
  candidates.forEach((candidate, position) => {
    const indexed = indexedLeaf(candidate.conditions);
    if (candidate.events.some((pattern) => pattern.includes('*'))) {
      globbed.push(position);
      add(globGroup, position, indexed);
      return;
    }
    for (const name of new Set(candidate.events)) add(byName.get(name) ?? byName.set(name, newGroup()).get(name)!, position, indexed);
  });

  return {
    candidatesFor(name, context) {
      const reading: Reading = { context, selected: new Map(), fails: new Map() };
      const exact = byName.get(name);
      const positions = exact ? visitedIn(exact, reading) : [];
      const globMatched = new Set(globbed.filter((position) => matchesEvents(candidates[position].events, name)));
      if (globMatched.size) positions.push(...visitedIn(globGroup, reading).filter((position) => globMatched.has(position)));
      // A trigger may be reached twice (two of its `in` literals, or several values under `[*]`).
      const ordered = [...new Set(positions)].sort((a, b) => a - b);
      return { candidates: ordered.map((position) => candidates[position]), eventsMatched: (exact?.members ?? 0) + globMatched.size };
    },
  };
}
