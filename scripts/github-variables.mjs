// The GitHub variables of the template autocomplete (GET /api/v1/trigger-contexts), derived from the JSON
// schemas GitHub's own libraries are generated from (@octokit/webhooks-schemas: the fields, their types and
// descriptions) and from GitHub's example payloads (@octokit/webhooks-examples: an example of each), for the
// events listed here, two levels below `payload`. Written to generated/github-variables.json by
// scripts/generate.mjs; the hand-written variables of src/triggers/trigger-contexts-fns.ts are the common ones.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The GitHub events the autocomplete describes (`event.action`, or `event` alone for one without actions). */
export const GITHUB_EVENTS = ['issues.opened', 'issues.labeled', 'issue_comment.created', 'pull_request.opened', 'pull_request.closed', 'push'];
const DEPTH = 2;
const MAX_DESCRIPTION = 200;
const MAX_EXAMPLE = 120;

const { definitions } = require('@octokit/webhooks-schemas');
const examples = require('@octokit/webhooks-examples');

const resolve = (schema) => (schema?.$ref ? resolve(definitions[schema.$ref.replace('#/definitions/', '')]) : schema);

/** A property's schemas, its own and what it refers to or extends, most specific first. */
function layers(schema, found = []) {
  if (!schema) return found;
  found.push(schema);
  if (schema.$ref) layers(definitions[schema.$ref.replace('#/definitions/', '')], found);
  for (const part of schema.allOf ?? []) layers(part, found);
  return found;
}

/** The properties an object schema gives room for: those of every layer (allOf extends a base). */
function propertiesOf(schema) {
  const properties = {};
  for (const layer of layers(schema).reverse()) Object.assign(properties, layer.properties ?? {});
  return properties;
}

const describe = (schema) => layers(schema).map((layer) => layer.description).find((text) => typeof text === 'string' && text.trim());
const jsonType = (value) => (value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value);

function clipText(text, max) {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Every scalar field `DEPTH` levels below `payload`, with an example from GitHub's example payload of the event. */
function variablesOf(event) {
  const [name, action] = event.split('.');
  const schema = definitions[action ? `${name}$${action}` : `${name}$event`];
  const payload = examples.find((entry) => entry.name === name)?.examples.find((example) => (action ? example.action === action : true));
  if (!schema || !payload) throw new Error(`no schema or example payload for ${event}`);
  const found = [];
  const walk = (schema, value, path, depth) => {
    for (const [key, property] of Object.entries(propertiesOf(schema))) {
      const inner = value?.[key];
      if (inner === undefined) continue; // no example to show
      const type = jsonType(inner);
      if (type === 'object' && depth + 1 < DEPTH) walk(property, inner, [...path, key], depth + 1);
      if (type === 'object' || type === 'array' || type === 'null') continue;
      const description = describe(property) ?? describe(resolve(property));
      found.push({
        event,
        path: ['payload', ...path, key].join('.'),
        type,
        description: description ? clipText(description, MAX_DESCRIPTION) : `\`${key}\` of the ${path.length ? path[path.length - 1] : 'payload'}.`,
        example: typeof inner === 'string' ? clipText(inner, MAX_EXAMPLE) : inner,
      });
    }
  };
  walk(schema, payload, [], 0);
  return found;
}

/** The derived variables, as JSON text. */
export function githubVariables() {
  // One variable a line, for readable diffs.
  const variables = GITHUB_EVENTS.flatMap(variablesOf).map((variable) => JSON.stringify(variable));
  return `{"events":${JSON.stringify(GITHUB_EVENTS)},"variables":[\n${variables.join(',\n')}\n]}\n`;
}
