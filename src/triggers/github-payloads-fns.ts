// What a GitHub delivery can carry, from the JSON schemas GitHub's own libraries are generated from
// (@octokit/webhooks-schemas): the events by name, and whether an event's payload has room for a path.
// Community-maintained schemas can lag behind GitHub, so what they say is a warning, never a refusal.
import type { Step } from './condition-paths';

type Schema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
};

/** Loaded with the first GitHub path checked (about 0.6 MB of JSON): a server without GitHub jobs never needs it. */
let loaded: { definitions: Record<string, Schema>; events: Map<string, Schema> } | undefined;
function schemas() {
  if (!loaded) {
    const { definitions } = require('@octokit/webhooks-schemas') as { definitions: Record<string, Schema> };
    // `issues$labeled` is the delivery `issues.labeled`; `push$event` one without an action, `push`.
    const events = new Map(
      Object.entries(definitions)
        .filter(([name]) => name.includes('$'))
        .map(([name, schema]) => [name.endsWith('$event') ? name.slice(0, -'$event'.length) : name.replace('$', '.'), schema]),
    );
    loaded = { definitions, events };
  }
  return loaded;
}

/** The published event names (`issues.labeled`, `push`, …). */
export const githubEventNames = (): string[] => [...schemas().events.keys()];

const MAX_DEPTH = 64;

/** Whether `schema` has room for `steps` from `at` on; a part it does not constrain has room for anything. */
function hasRoom(schema: Schema | undefined, steps: Step[], at: number, depth = 0): boolean {
  if (!schema || depth > MAX_DEPTH) return true;
  if (schema.$ref) return hasRoom(schemas().definitions[schema.$ref.replace('#/definitions/', '')], steps, at, depth + 1);
  if (at === steps.length) return true;
  if (schema.allOf) return schema.allOf.every((part) => hasRoom(part, steps, at, depth + 1));
  const branches = schema.oneOf ?? schema.anyOf;
  if (branches) return branches.some((branch) => hasRoom(branch, steps, at, depth + 1));
  const types = schema.type === undefined ? null : [schema.type].flat();
  const step = steps[at];
  if ('key' in step) {
    if (types && !types.includes('object')) return false;
    const property = schema.properties?.[step.key];
    if (property) return hasRoom(property, steps, at + 1, depth + 1);
    if (typeof schema.additionalProperties === 'object') return hasRoom(schema.additionalProperties, steps, at + 1, depth + 1);
    return schema.additionalProperties !== false;
  }
  if (types && !types.includes('array')) return false;
  return hasRoom(schema.items, steps, at + 1, depth + 1);
}

/**
 * The published events among `names` whose payload has room for `steps` (a path below `payload`); names the
 * schemas do not know are left out.
 */
export function eventsWithRoom(names: string[], steps: Step[]): string[] {
  const { events } = schemas();
  return names.filter((name) => events.has(name) && hasRoom(events.get(name), steps, 0));
}
