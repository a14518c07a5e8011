// Prompt and run-name templates in Liquid (liquidjs): strict variables and filters, no file system, own
// properties only, and limits on template size, render time, memory and output.
import { analyzeSync, Liquid, type Template } from 'liquidjs';

export const MAX_OUTPUT = 200_000;

const liquid = new Liquid({
  strictVariables: true,
  // …except where a template asks whether a value is there: `{% if data.note %}` is how optional data is
  // written, and must not fail on the runs that lack it.
  lenientIf: true,
  strictFilters: true,
  // Only the context's own data: `{{ payload.constructor }}` is undefined, not a function.
  ownPropertyOnly: true,
  // An empty in-memory map: `include`, `render` and `layout` find nothing, and never read a file.
  templates: {},
  parseLimit: 100_000,
  renderLimit: 1_000,
  memoryLimit: 10_000_000,
});

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
