// Tenant-supplied input schemas: what is refused before compiling (with the pointer named), and that what
// is accepted validates, including recursive schemas that descend into the data.
import { checkInputSchema, compileInputSchema, InputSchemaProblem, INPUT_SCHEMA_LIMITS } from '../../src/jobs/input-schema-fns';

function problemOf(schema: unknown): { pointer: string; message: string } | null {
  try {
    checkInputSchema(schema);
    return null;
  } catch (err) {
    if (!(err instanceof InputSchemaProblem)) throw err;
    return { pointer: err.pointer, message: err.message };
  }
}

const tree = {
  $defs: { node: { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } }, required: ['name'] } },
  $ref: '#/$defs/node',
};
const jsonValue = { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'null' }, { type: 'array', items: { $ref: '#' } }, { type: 'object', additionalProperties: { $ref: '#' } }] };

/** `levels` definitions, each applying the one before twice to the same value: 2^levels applications. */
function doubling(levels: number) {
  const $defs: Record<string, unknown> = { d0: { type: 'string' } };
  for (let i = 1; i <= levels; i++) $defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i - 1}` }, { $ref: `#/$defs/d${i - 1}` }] };
  return { $defs, $ref: `#/$defs/d${levels}` };
}

describe('input schemas refused before they are compiled', () => {
  it.each<[string, unknown, string, RegExp]>([
    ['the root referring to itself', { $ref: '#' }, '/$ref', /cycle of references/],
    ['a reference to the root under allOf', { allOf: [{ $ref: '#' }] }, '/allOf/0/$ref', /cycle of references/],
    ['if and then referring to the root', { if: { $ref: '#' }, then: { $ref: '#' } }, '/if/$ref', /cycle of references/],
    ['two definitions referring to each other', { $defs: { a: { $ref: '#/$defs/b' }, b: { anyOf: [{ $ref: '#/$defs/a' }] } }, $ref: '#/$defs/a' }, '/$defs/a/$ref', /cycle of references/],
    ['a reference to an $id', { $id: 'x', $ref: 'x' }, '/$ref', /may only point at the schema itself/],
    ['a dynamic reference', { $dynamicRef: '#meta' }, '/$dynamicRef', /dynamic references/],
    ['a recursive reference', { properties: { a: { $recursiveRef: '#' } } }, '/properties/a/$recursiveRef', /recursive references/],
    ['a remote reference', { properties: { a: { $ref: 'https://example.com/schema.json' } } }, '/properties/a/$ref', /may only point/],
    ['a reference outside $defs', { definitions: { a: { type: 'string' } }, $ref: '#/definitions/a' }, '/$ref', /may only point/],
    ['a reference to nothing', { $ref: '#/$defs/missing' }, '/$ref', /points at no subschema/],
    ['an $id below the root', { properties: { a: { $id: 'https://example.com/a', type: 'string' } } }, '/properties/a/$id', /only at the root/],
    ['an anchor', { $defs: { a: { $anchor: 'here' } } }, '/$defs/a/$anchor', /anchors are not supported/],
    ['another dialect', { $schema: 'http://json-schema.org/draft-07/schema#' }, '/$schema', /2020-12/],
    ['a type that does not exist', { type: 'object', properties: { a: { type: 'nope' } } }, '/properties/a/type', /not a valid JSON Schema/],
    ['a pattern needing backtracking', { properties: { a: { type: 'string', pattern: '(a)\\1' } } }, '/properties/a/pattern', /RE2/],
    ['a pattern property needing lookahead', { patternProperties: { '^(?=x)': true } }, '/patternProperties/^(?=x)', /RE2/],
    ['exponential applications to one value', doubling(12), '/$defs/d4', /more than 200 subschemas/],
    ['exponential applications one level down per level', { allOf: [{ properties: { a: { $ref: '#' } } }, { properties: { a: { $ref: '#' } } }] }, '', /more than 200 subschemas/],
    ['more than 64 KiB', { description: 'x'.repeat(INPUT_SCHEMA_LIMITS.bytes) }, '', /larger than 64 KiB/],
  ])('%s', (_name, schema, pointer, message) => {
    const problem = problemOf(schema);
    expect(problem).toEqual({ pointer, message: expect.stringMatching(message) });
  });

  it('refuses a schema nested deeper than the limit', () => {
    let schema: unknown = { type: 'string' };
    for (let i = 0; i < INPUT_SCHEMA_LIMITS.depth; i++) schema = { items: schema };
    expect(problemOf(schema)?.message).toMatch(/nests deeper than 32 levels/);
  });

  it('names the escaped pointer of a property whose name holds / and ~', () => {
    expect(problemOf({ properties: { 'a/b~c': { $ref: '#/nope' } } })?.pointer).toBe('/properties/a~1b~0c/$ref');
  });
});

describe('input schemas accepted', () => {
  it.each<[string, unknown, unknown[], unknown[]]>([
    ['a tree of children through $defs', tree, [{ name: 'a' }, { name: 'a', children: [{ name: 'b', children: [{ name: 'c' }] }] }], [{ name: 'a', children: [{ children: [] }] }, { children: [] }]],
    ['any JSON value, recursively', jsonValue, [1, 'x', [1, [2, { a: [null] }]], { a: { b: { c: true } } }], []],
    ['a root $id, the 2020-12 dialect and a reference into $defs with an escaped name', { $schema: 'https://json-schema.org/draft/2020-12/schema', $id: 'https://example.com/input', $defs: { 'n m': { type: 'integer' } }, properties: { n: { $ref: '#/$defs/n%20m' } } }, [{ n: 1 }], [{ n: 'one' }]],
    ['a pattern (RE2)', { type: 'object', properties: { branch: { type: 'string', pattern: '^feature/[a-z0-9-]+$' } } }, [{ branch: 'feature/x-1' }], [{ branch: 'main' }]],
    ['a property named like a keyword', { type: 'object', properties: { $ref: { type: 'string' }, $id: { type: 'integer' } } }, [{ $ref: 'x', $id: 1 }], [{ $id: 'x' }]],
    ['ten definitions applied once each', { allOf: Array.from({ length: 10 }, (_, i) => ({ $ref: `#/$defs/d${i}` })), $defs: Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`d${i}`, { type: 'object' }])) }, [{}], [1]],
  ])('%s', (_name, schema, valid, invalid) => {
    expect(problemOf(schema)).toBeNull();
    const validate = compileInputSchema(schema);
    for (const data of valid) expect(validate(data)).toBe(true);
    for (const data of invalid) expect(validate(data)).toBe(false);
  });

  it('checks a pattern on RE2, where a backtracking engine would never finish', () => {
    // 2^40 steps for JavaScript's engine (the test would time out); a few thousand for RE2.
    const validate = compileInputSchema({ type: 'string', pattern: '^(a|a)*$' });
    expect(validate(`${'a'.repeat(40)}!`)).toBe(false);
    expect(validate('a'.repeat(40))).toBe(true);
  });

  it('compiles two tenants\' schemas with the same root $id side by side', () => {
    const first = compileInputSchema({ $id: 'https://example.com/same', type: 'string' });
    const second = compileInputSchema({ $id: 'https://example.com/same', type: 'integer' });
    expect([first('x'), first(1), second('x'), second(1)]).toEqual([true, false, false, true]);
  });
});
