// The pure parts of /mcp: tool schemas rewritten into the form every MCP client takes (same meaning), and
// which Host and Origin may call.
import { allowedCallers, callerProblem } from '../../src/mcp/mcp-origin';
import { portableSchema } from '../../src/mcp/mcp-schema-fns';

const ANY = ['string', 'number', 'boolean', 'object', 'array', 'null'].map((type) => ({ type }));

describe('portableSchema', () => {
  it.each([
    ['a type list as anyOf branches', { type: ['string', 'null'], format: 'date-time' }, { anyOf: [{ type: 'string' }, { type: 'null' }], format: 'date-time' }],
    ['a one-type list as that type', { type: ['integer'] }, { type: 'integer' }],
    ['a type list beside anyOf in allOf', { type: ['object', 'null'], anyOf: [{ required: ['a'] }, { required: ['b'] }] }, { anyOf: [{ required: ['a'] }, { required: ['b'] }], allOf: [{ anyOf: [{ type: 'object' }, { type: 'null' }] }] }],
    ['a schema that constrains nothing as any JSON value', { description: 'The operand' }, { description: 'The operand', anyOf: ANY }],
    ['an empty schema under not as it is', { not: {} }, { not: {} }],
    ['if without then or else as constraining nothing', { if: { type: 'string' } }, { if: { type: 'string' }, anyOf: ANY }],
    ['if with then as it is', { if: { type: 'string' }, then: { minLength: 1 } }, { if: { type: 'string' }, then: { minLength: 1 } }],
    ['boolean subschemas as they are', { type: 'object', additionalProperties: true }, { type: 'object', additionalProperties: true }],
    ['OpenAPI example left out, a property named example kept', { type: 'object', example: { a: 1 }, properties: { example: { type: 'string', example: 'x' } } }, { type: 'object', properties: { example: { type: 'string' } } }],
  ])('writes %s', (_label, schema, expected) => {
    expect(portableSchema(schema as Record<string, unknown>)).toEqual(expected);
  });

  it('reaches every place a subschema sits', () => {
    const nested = { type: 'object', properties: { a: { type: 'array', items: { type: ['string', 'null'] }, prefixItems: [{}] } }, patternProperties: { '^x': {} }, $defs: { d: { oneOf: [{}] } }, additionalProperties: { type: ['number', 'null'] } };
    expect(portableSchema(nested)).toEqual({
      type: 'object',
      properties: { a: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'null' }] }, prefixItems: [{ anyOf: ANY }] } },
      patternProperties: { '^x': { anyOf: ANY } },
      $defs: { d: { oneOf: [{ anyOf: ANY }] } },
      additionalProperties: { anyOf: [{ type: 'number' }, { type: 'null' }] },
    });
  });

  it('leaves the schema it was given as it was', () => {
    const schema = { type: 'object', properties: { a: { type: ['string', 'null'] } } };
    portableSchema(schema);
    expect(schema).toEqual({ type: 'object', properties: { a: { type: ['string', 'null'] } } });
  });
});

describe('callerProblem', () => {
  const allowed = allowedCallers(new URL('https://flows.example.com'), ['http://localhost:6274']);
  it.each([
    ['its own name, no Origin', 'flows.example.com', undefined],
    ['its own name and origin', 'flows.example.com', 'https://flows.example.com'],
    ['its own name on another port', 'flows.example.com:8443', undefined],
    ['loopback names', 'localhost:3000', undefined],
    ['an IPv4 loopback address', '127.0.0.1:3000', undefined],
    ['an IPv6 loopback address', '[::1]:3000', undefined],
    ['a name in upper case', 'FLOWS.example.com', undefined],
    ['an added origin', 'localhost:3000', 'http://localhost:6274'],
  ])('allows %s', (_label, host, origin) => {
    expect(callerProblem(host, origin, allowed)).toBeNull();
  });

  it.each([
    ['another name', 'evil.example.com', undefined, /Host/],
    ['a name that ends like its own', 'evilflows.example.com', undefined, /Host/],
    ['no Host', undefined, undefined, /Host/],
    ['a Host with a path', 'localhost/x', undefined, /Host/],
    ['a Host with credentials', 'flows.example.com@evil.example.com', undefined, /Host/],
    ['another origin', 'flows.example.com', 'https://evil.example.com', /Origin/],
    ['its own origin over http', 'flows.example.com', 'http://flows.example.com', /Origin/],
    ['an opaque origin', 'flows.example.com', 'null', /Origin/],
    ['a loopback origin not added', 'localhost:3000', 'http://localhost:3000', /Origin/],
  ])('refuses %s', (_label, host, origin, problem) => {
    expect(callerProblem(host, origin, allowed)).toMatch(problem);
  });
});
