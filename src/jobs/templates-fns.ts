// Prompt and run-name templates in Liquid (liquidjs): strict variables and filters, no file system, own
// properties only, and limits on template size, render time, memory and output. Parsing (at save) runs
// here on the main thread, bounded by the parse limit; rendering a tenant's template can loop for its whole
// render limit, so services render through the worker pool (render-pool.ts), which calls renderTemplate
// in a worker thread and stops a worker that overruns the limit.
import { analyzeSync, Liquid, type Template } from 'liquidjs';

export const MAX_OUTPUT = 200_000;
/** How long one render may take; the pool also holds a worker to it (with a little slack). */
export const RENDER_LIMIT_MS = 1_000;
/** liquidjs's words for a render over its limit, which the pool also answers when it has to stop a worker. */
export const RENDER_LIMIT_EXCEEDED = 'template render limit exceeded';

const liquid = new Liquid({
  strictVariables: true,
  // …except where a template asks whether a value is there: `{% if data.note %}` is how optional data is
  // written, and must not fail on the runs that lack it.
  lenientIf: true,
  strictFilters: true,
  // Only the context's own data: `{{ payload.constructor }}` is undefined, not a function.
  ownPropertyOnly: true,
  // An empty in-memory map: nothing is ever read from a file (the partial tags are refused below).
  templates: {},
  parseLimit: 100_000,
  renderLimit: RENDER_LIMIT_MS,
  memoryLimit: 10_000_000,
});

// A template has no partials to include: the tags that name one are refused where they are written, when
// the template parses, rather than failing at the first render (or in the save-time analysis, which looks
// the partial up).
for (const name of ['include', 'render', 'layout']) {
  liquid.registerTag(name, {
    parse() {
      throw new Error(`\`${name}\` is not available: templates have no partials to include`);
    },
    render() {},
  });
}

/** A template that does not parse or render; the message gives the line and column. */
export class TemplateProblem extends Error {}

function problem(err: unknown): TemplateProblem {
  const { message = String(err), token } = err as { message?: string; token?: { getPosition?: () => [number, number] } };
  const position = token?.getPosition?.();
  const what = message.replace(/, line:\d+, col:\d+$/, '');
  return new TemplateProblem(position ? `line ${position[0]}, column ${position[1]}: ${what}` : what);
}

export type CompiledTemplate = Template[];

/** Parses once (when a job is saved); throws TemplateProblem. */
export function compileTemplate(source: string): CompiledTemplate {
  try {
    return liquid.parse(source);
  } catch (err) {
    throw problem(err);
  }
}

/** A name a template reads from its context (not one of its own `assign`, `capture` or `for` variables), and where. */
export interface TemplateVariable {
  name: string;
  line: number;
  column: number;
}

/** The names `template` reads from its context, each at its first use, by liquidjs's own analysis of the parsed template. */
export function templateVariables(template: CompiledTemplate): TemplateVariable[] {
  return Object.entries(analyzeSync(template).globals).map(([name, [first]]) => ({ name, line: first.location.row, column: first.location.col }));
}

/** Liquid's own properties of arrays and strings: a path ends before them. */
const LIQUID_PROPERTIES = new Set(['size', 'first', 'last']);

/**
 * The paths `template` reads from its context as far as they are written out (`payload.issue.labels[0].name`
 * is `payload`, `issue`, `labels`, 0, `name`; a path stops at a part looked up by a variable, and before
 * `size`, `first` and `last`), once each.
 */
export function templatePaths(template: CompiledTemplate): (string | number)[][] {
  const paths = new Map<string, (string | number)[]>();
  for (const uses of Object.values(analyzeSync(template).globals)) {
    for (const { segments } of uses) {
      const path: (string | number)[] = [];
      for (const segment of segments) {
        if ((typeof segment !== 'string' && typeof segment !== 'number') || LIQUID_PROPERTIES.has(String(segment))) break;
        path.push(segment);
      }
      paths.set(JSON.stringify(path), path);
    }
  }
  return [...paths.values()];
}

/** Renders with `context` as the variables; throws TemplateProblem, also for output over MAX_OUTPUT characters. */
export async function renderTemplate(template: CompiledTemplate, context: Record<string, unknown>): Promise<string> {
  let output: string;
  try {
    output = await liquid.render(template, context);
  } catch (err) {
    throw problem(err);
  }
  if (output.length > MAX_OUTPUT) throw new TemplateProblem(`the rendered output exceeds ${MAX_OUTPUT} characters`);
  return output;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && [Object.prototype, null].includes(Object.getPrototypeOf(value));

/**
 * The part of `context` that `paths` (templatePaths of the templates to render) lead to: each path's value
 * whole, and whole as soon as the path meets anything but a plain object (an array, a string). A render
 * reads nothing else, so it gives the same output and the same problems with it; the render pool sends
 * this to its worker rather than a whole webhook payload (copying 1 MB to a thread takes about 4 ms).
 */
export function pickPaths(context: Record<string, unknown>, paths: (string | number)[][]): Record<string, unknown> {
  if (paths.some((path) => path.length === 0)) return context;
  const picked: Record<string, unknown> = {};
  for (const path of paths) {
    let from = context;
    let into = picked;
    for (const [i, segment] of path.entries()) {
      const key = String(segment);
      if (!Object.prototype.hasOwnProperty.call(from, key)) break;
      const value = from[key];
      if (i === path.length - 1 || !isPlainObject(value)) {
        into[key] = value; // whole, also over what a longer path picked of it
        break;
      }
      if (into[key] === value) break; // a shorter path took it whole
      into = (into[key] ??= {}) as Record<string, unknown>;
      from = value;
    }
  }
  return picked;
}
