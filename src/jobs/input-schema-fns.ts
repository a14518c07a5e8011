// Tenant-supplied JSON Schemas (an invocation trigger's `inputSchema`, also offered to MCP clients) are
// checked before they are compiled, so that no saved schema can make validation recurse for ever, run in
// exponential time or reach outside itself:
// - at most 64 KiB of JSON, nested at most 32 levels, valid against the 2020-12 meta-schema;
// - `$ref` only to the schema itself (`#`) or into its own `$defs` (`#/$defs/…`); no `$dynamicRef`,
//   `$recursiveRef`, anchors, or `$id` below the root (which would move what a reference means);
// - no cycle of references that applies a schema to the same value again (`{"allOf":[{"$ref":"#"}]}`);
// - at most 200 subschemas applied to any one value of the data, however deep the data nests;
// - patterns run on RE2 (linear time), so one that needs backtracking is refused; each is bounded in
//   length and compiled size, and a validation's matches are charged to a work meter (triggers/regex.ts):
//   data too long for its patterns is refused as too costly to check, never matched for seconds.
// Problems name the JSON pointer of the offending part.
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { metered } from '../lib/work-meter';
import { compileRegex } from '../triggers/regex';
import { meteredValidator } from './metered-validator';

export const INPUT_SCHEMA_LIMITS = { bytes: 64 * 1024, depth: 32, applicationsPerValue: 200 } as const;
const META = 'https://json-schema.org/draft/2020-12/schema';
const FORBIDDEN: Record<string, string> = {
  $dynamicRef: 'dynamic references are not supported',
  $dynamicAnchor: 'dynamic anchors are not supported',
  $recursiveRef: 'recursive references are not supported',
  $recursiveAnchor: 'recursive anchors are not supported',
  $anchor: 'anchors are not supported; refer into `$defs` by JSON pointer (`#/$defs/name`)',
};

export class InputSchemaProblem extends Error {
  constructor(
    readonly pointer: string,
    message: string,
  ) {
    super(message);
  }
}

// Where subschemas sit, by what they are applied to: the same value, a property's value, an item, a name.
const SAME_ONE = ['not', 'if', 'then', 'else'];
const SAME_LIST = ['allOf', 'anyOf', 'oneOf'];
const SAME_MAP = ['dependentSchemas', 'dependencies'];
const ANY_PROPERTY = ['additionalProperties', 'unevaluatedProperties'];
const ANY_ITEM = ['items', 'contains', 'unevaluatedItems', 'additionalItems'];
const UNAPPLIED_MAP = ['$defs', 'definitions'];

/** One subschema and the subschemas it applies, by the value they apply to. */
interface Node {
  same: { to: string; via: string }[];
  named: Map<string, string[]>;
  anyProperty: string[];
  indexed: string[][];
  anyItem: string[];
  name: string[];
}

const escape = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function depthOf(value: unknown, depth = 0): number {
  if (depth > INPUT_SCHEMA_LIMITS.depth || typeof value !== 'object' || value === null) return depth;
  let max = depth;
  for (const child of Object.values(value)) max = Math.max(max, depthOf(child, depth + 1));
  return max;
}

/** The subschemas of `schema` by pointer, with the references still to resolve. */
function graphOf(schema: unknown) {
  const nodes = new Map<string, Node>();
  const refs: { from: string; via: string; target: string }[] = [];
  const visit = (value: unknown, at: string) => {
    const node: Node = { same: [], named: new Map(), anyProperty: [], indexed: [], anyItem: [], name: [] };
    nodes.set(at, node);
    if (!isObject(value)) return;
    const sub = (key: string, child: unknown) => {
      const pointer = `${at}/${key}`;
      visit(child, pointer);
      return pointer;
    };
    for (const [key, child] of Object.entries(value)) {
      const here = `${at}/${escape(key)}`;
      if (key in FORBIDDEN) throw new InputSchemaProblem(here, FORBIDDEN[key]);
      if (key === '$id' && at !== '') throw new InputSchemaProblem(here, '`$id` is allowed only at the root: below it, it would change what references mean');
      if (key === '$schema' && (at !== '' || child !== META)) throw new InputSchemaProblem(here, `only the 2020-12 dialect is supported: \`$schema\` may only be "${META}", at the root`);
      if (key === '$ref' && typeof child === 'string') refs.push({ from: at, via: here, target: child });
      if (key === 'pattern' && typeof child === 'string') checkPattern(child, here);
      if (SAME_ONE.includes(key)) node.same.push({ to: sub(key, child), via: here });
      if (SAME_LIST.includes(key) && Array.isArray(child)) child.forEach((item, i) => node.same.push({ to: sub(`${key}/${i}`, item), via: here }));
      if (SAME_MAP.includes(key) && isObject(child)) {
        for (const [name, item] of Object.entries(child)) if (!Array.isArray(item)) node.same.push({ to: sub(`${key}/${escape(name)}`, item), via: here });
      }
      if (key === 'properties' && isObject(child)) for (const [name, item] of Object.entries(child)) node.named.set(name, [sub(`${key}/${escape(name)}`, item)]);
      if (key === 'patternProperties' && isObject(child)) {
        for (const [pattern, item] of Object.entries(child)) {
          checkPattern(pattern, `${here}/${escape(pattern)}`);
          node.anyProperty.push(sub(`${key}/${escape(pattern)}`, item));
        }
      }
      if (ANY_PROPERTY.includes(key)) node.anyProperty.push(sub(key, child));
      if (ANY_ITEM.includes(key) && !Array.isArray(child)) node.anyItem.push(sub(key, child));
      if (key === 'prefixItems' && Array.isArray(child)) child.forEach((item, i) => node.indexed.push([sub(`${key}/${i}`, item)]));
      if (key === 'propertyNames') node.name.push(sub(key, child));
      if (UNAPPLIED_MAP.includes(key) && isObject(child)) for (const [name, item] of Object.entries(child)) sub(`${key}/${escape(name)}`, item);
    }
  };
  visit(schema, '');
  return { nodes, refs };
}

function checkPattern(pattern: string, at: string) {
  try {
    compileRegex(pattern);
  } catch (err) {
    throw new InputSchemaProblem(at, `the pattern is not supported (${(err as Error).message.slice(0, 200)}); patterns run on RE2, without backreferences or lookaround`);
  }
}

/** `#` or `#/$defs/…`, as a pointer into the schema; anything else is refused. */
function resolve(target: string, via: string, nodes: Map<string, Node>): string {
  let pointer: string | null = null;
  if (target === '#') pointer = '';
  else if (target.startsWith('#/$defs/')) {
    try {
      pointer = decodeURIComponent(target.slice(1));
    } catch {
      pointer = null;
    }
  }
  if (pointer === null) throw new InputSchemaProblem(via, `\`${target.slice(0, 200)}\` is not allowed: a reference may only point at the schema itself (\`#\`) or into its own \`$defs\` (\`#/$defs/name\`)`);
  if (!nodes.has(pointer)) throw new InputSchemaProblem(via, `\`${target.slice(0, 200)}\` points at no subschema of this schema`);
  return pointer;
}

/** The subschemas in an order where each comes after every one that applies it to the same value. */
function sameValueOrder(nodes: Map<string, Node>): string[] {
  const state = new Map<string, 'open' | 'done'>();
  const order: string[] = [];
  const stack: { at: string; via: string }[] = [];
  const visit = (at: string, via: string) => {
    if (state.get(at) === 'done') return;
    if (state.get(at) === 'open') {
      const cycle = stack.slice(stack.findIndex((step) => step.at === at) + 1).map((step) => step.via);
      const ref = cycle.find((step) => step.endsWith('/$ref')) ?? via;
      throw new InputSchemaProblem(ref, 'a cycle of references applies a schema to the same value again, so validation would never end; a recursive reference must first descend into a property or an item');
    }
    state.set(at, 'open');
    stack.push({ at, via });
    for (const edge of nodes.get(at)!.same) visit(edge.to, edge.via);
    stack.pop();
    state.set(at, 'done');
    order.push(at);
  };
  for (const at of nodes.keys()) visit(at, at);
  return order.reverse();
}

type Counts = Map<string, number>;
const CAP = INPUT_SCHEMA_LIMITS.applicationsPerValue + 1;

/** Every subschema applied to one value, with how many times, when `seeds` are applied to it. */
function applied(seeds: Counts, order: string[], nodes: Map<string, Node>): Counts {
  const counts = new Map(seeds);
  for (const at of order) {
    const n = counts.get(at);
    if (!n) continue;
    for (const edge of nodes.get(at)!.same) counts.set(edge.to, Math.min(CAP, (counts.get(edge.to) ?? 0) + n));
  }
  return counts;
}

/** Refuses a schema that would apply more than the limit of subschemas to one value of the data. */
function checkApplications(counts: Counts) {
  let total = 0;
  let most: [string, number] = ['', 0];
  for (const entry of counts) {
    total += entry[1];
    if (entry[1] > most[1]) most = entry;
  }
  if (total > INPUT_SCHEMA_LIMITS.applicationsPerValue) {
    throw new InputSchemaProblem(most[0], `the schema applies more than ${INPUT_SCHEMA_LIMITS.applicationsPerValue} subschemas to one value of the data (this one ${most[1] >= CAP ? 'more than ' : ''}${Math.min(most[1], CAP - 1)} times), which makes validation too costly`);
  }
}

/**
 * What may be applied to one value one level down the data: the worst of a named property, any other
 * property, an item at an index, any other item, and a property name. An upper bound, so a schema that
 * passes is safe.
 */
function oneLevelDown(counts: Counts, order: string[], nodes: Map<string, Node>): Counts {
  const kinds = new Map<string, Counts>();
  const add = (kind: string, targets: string[], n: number) => {
    if (!targets.length) return;
    if (!kinds.has(kind)) kinds.set(kind, new Map());
    const into = kinds.get(kind)!;
    for (const to of targets) into.set(to, Math.min(CAP, (into.get(to) ?? 0) + n));
  };
  for (const [at, n] of counts) {
    const node = nodes.get(at)!;
    for (const [name, targets] of node.named) add(`property:${name}`, targets, n);
    add('property', node.anyProperty, n);
    node.indexed.forEach((targets, i) => add(`item:${i}`, targets, n));
    add('item', node.anyItem, n);
    add('name', node.name, n);
  }
  const worst: Counts = new Map();
  for (const [kind, seeds] of kinds) {
    // A named property also gets what any property gets, and an indexed item what any item gets.
    const shared = kinds.get(kind.startsWith('property:') ? 'property' : kind.startsWith('item:') ? 'item' : '');
    const all = new Map(seeds);
    if (shared) for (const [to, n] of shared) all.set(to, Math.min(CAP, (all.get(to) ?? 0) + n));
    for (const [to, n] of applied(all, order, nodes)) worst.set(to, Math.max(worst.get(to) ?? 0, n));
  }
  return worst;
}

const sameCounts = (a: Counts, b: Counts) => a.size === b.size && [...a].every(([at, n]) => b.get(at) === n);

/** Throws an `InputSchemaProblem` for the first rule `schema` breaks. */
export function checkInputSchema(schema: unknown): void {
  if (JSON.stringify(schema).length > INPUT_SCHEMA_LIMITS.bytes) throw new InputSchemaProblem('', `the schema is larger than ${INPUT_SCHEMA_LIMITS.bytes / 1024} KiB of JSON`);
  if (depthOf(schema) > INPUT_SCHEMA_LIMITS.depth) throw new InputSchemaProblem('', `the schema nests deeper than ${INPUT_SCHEMA_LIMITS.depth} levels`);
  const { nodes, refs } = graphOf(schema);
  const ajv = tenantAjv();
  if (!ajv.validateSchema(schema as object)) {
    const [error] = ajv.errors ?? [];
    throw new InputSchemaProblem(error?.instancePath ?? '', `it is not a valid JSON Schema (2020-12): ${error?.message ?? 'invalid'}`);
  }
  for (const ref of refs) nodes.get(ref.from)!.same.push({ to: resolve(ref.target, ref.via, nodes), via: ref.via });
  const order = sameValueOrder(nodes);
  let counts = applied(new Map([['', 1]]), order, nodes);
  checkApplications(counts);
  for (let level = 1; level <= INPUT_SCHEMA_LIMITS.depth && counts.size; level++) {
    const next = oneLevelDown(counts, order, nodes);
    checkApplications(next);
    if (sameCounts(next, counts)) break;
    counts = next;
  }
}

// Made with the first input schema: most servers never see one, and an Ajv instance holds megabytes. Its
// patterns run on RE2; compiled schemas are not kept by $id (tenants' ids would meet in one registry).
let ajv: Ajv2020 | undefined;
function tenantAjv(): Ajv2020 {
  if (ajv) return ajv;
  // Ajv keeps compiled patterns by their `toString()`: each needs its own.
  const regExp = Object.assign((pattern: string) => ({ ...compileRegex(pattern), toString: () => `re2:${pattern}` }), { code: 're2js' });
  return (ajv = addFormats(new Ajv2020({ strict: false, allErrors: false, addUsedSchema: false, code: { regExp } })));
}

/**
 * Checks `schema` and compiles it; throws an `InputSchemaProblem` for a schema that is refused. Compiling
 * its patterns is charged to one work meter: many large patterns are refused, not compiled for seconds.
 */
export const compileInputSchema = (schema: unknown): ValidateFunction => metered(() => compileChecked(schema));

function compileChecked(schema: unknown): ValidateFunction {
  checkInputSchema(schema);
  const compiler = tenantAjv();
  // Compiled under an id of ours: with nothing registered by id, Ajv resolves `#` only against the root's
  // own id, and every reference left is local, so the tenant's root `$id` means nothing to validation.
  const compiled = typeof schema === 'boolean' ? schema : { ...(schema as object), $id: 'urn:flows:input-schema' };
  try {
    return meteredValidator(compiler.compile(compiled));
  } catch (err) {
    throw new InputSchemaProblem('', `it does not compile: ${(err as Error).message.slice(0, 200)}`);
  } finally {
    // Ajv keeps every compiled schema in a cache of its own; the caller keeps the validator.
    if (typeof compiled === 'object') compiler.removeSchema(compiled);
  }
}
