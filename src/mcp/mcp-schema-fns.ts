// Tool schemas in the form the most MCP clients take. The contract writes a nullable field as a type list
// (`type: [string, "null"]`) and an operand that may be any JSON value with no keyword at all; both are valid
// JSON Schema, but clients that map tool schemas onto a single-`type` dialect refuse or drop them (the MCP
// Inspector's `--strict` lists them as `type-union` and `untyped-schema`). The same meaning is spelled as
// `anyOf` branches of one type each. OpenAPI's own `example` keyword, which no JSON Schema client reads, is
// left out.
export type Schema = Record<string, any>;

const ANY_JSON_VALUE = ['string', 'number', 'boolean', 'object', 'array', 'null'].map((type) => ({ type }));

// Where subschemas sit: a map of them, a list of them, or one.
const SCHEMA_MAPS = ['properties', 'patternProperties', 'dependentSchemas', '$defs', 'definitions'];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SCHEMA_ONES = ['items', 'contains', 'not', 'propertyNames', 'if', 'then', 'else', 'additionalProperties', 'unevaluatedProperties', 'additionalItems', 'unevaluatedItems', 'contentSchema'];

// Any of these keeps a schema from accepting every value (`if` only with `then` or `else`).
const CONSTRAINING = new Set([
  'type', 'enum', 'const', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'maxLength', 'minLength', 'pattern',
  'format', 'contentMediaType', 'contentEncoding', 'contentSchema', 'maxItems', 'minItems', 'uniqueItems', 'maxContains', 'minContains',
  'maxProperties', 'minProperties', 'required', 'dependentRequired', 'dependencies', ...SCHEMA_MAPS, ...SCHEMA_LISTS, ...SCHEMA_ONES, '$ref',
].filter((keyword) => !['$defs', 'definitions', 'if', 'then', 'else'].includes(keyword)));

const constrains = (schema: Schema) => Object.keys(schema).some((keyword) => CONSTRAINING.has(keyword)) || ('if' in schema && ('then' in schema || 'else' in schema));

const isSchemaObject = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `schema` with every type list as `anyOf` branches and every schema that accepts anything saying so. */
export function portableSchema<T extends Schema>(schema: T): T {
  return portable(schema, undefined) as T;
}

function portable(schema: unknown, keyword: string | undefined): unknown {
  if (!isSchemaObject(schema)) return schema; // `true` / `false` where a keyword takes a boolean
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'example') continue;
    if (SCHEMA_MAPS.includes(key) && isSchemaObject(value)) out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, portable(sub, key)]));
    else if (SCHEMA_LISTS.includes(key) && Array.isArray(value)) out[key] = value.map((sub) => portable(sub, key));
    else if (SCHEMA_ONES.includes(key)) out[key] = portable(value, key);
    else out[key] = value;
  }
  if (Array.isArray(out.type)) {
    const types: unknown[] = out.type;
    delete out.type;
    if (types.length === 1) out.type = types[0];
    else if (out.anyOf) out.allOf = [...(out.allOf ?? []), { anyOf: types.map((type) => ({ type })) }];
    else out.anyOf = types.map((type) => ({ type }));
  }
  // Under `not`, an empty schema means "nothing": it stays as written.
  if (!constrains(out) && keyword !== 'not') out.anyOf = ANY_JSON_VALUE;
  return out;
}
