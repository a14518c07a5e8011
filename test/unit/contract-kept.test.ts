// The parsed contract kept between starts: read back, it is the document, its inlined form and the part
// requests are routed by as parsed, and a changed YAML is parsed anew, never answered from what was kept
// for the old one.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { load } from 'js-yaml';
import { inlineRefs, loadContract } from '../../src/http/contract';

const dir = mkdtempSync(path.join(tmpdir(), 'flows-contract-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const yamlOf = (title: string) => `openapi: 3.1.0
info: { title: ${title}, version: '1' }
paths:
  /pets:
    post:
      operationId: createPet
      summary: Adds a pet.
      security: [{ bearer: [] }]
      requestBody: { required: true, content: { application/json: { schema: { $ref: '#/components/schemas/Pet' } } } }
      responses:
        '201': { description: The pet., content: { application/json: { schema: { $ref: '#/components/schemas/Pet' } } } }
        '400': { description: Refused. }
components:
  securitySchemes:
    bearer: { type: http, scheme: bearer }
  schemas:
    Name: { type: string, maxLength: 10 }
    Pet: { type: object, properties: { name: { $ref: '#/components/schemas/Name' }, born: { type: string, format: date, example: 2026-01-01 } } }
`;

it('answers the same document parsed or kept, and parses a changed YAML anew', () => {
  const file = path.join(dir, 'openapi.yaml');
  const first = yamlOf(`First ${process.pid} ${Date.now()}`); // not kept by an earlier run
  writeFileSync(file, first);
  const parsed = loadContract(file);
  const kept = loadContract(file);
  expect(kept.document).toEqual(parsed.document);
  expect(isDeepStrictEqual(kept.inlined, JSON.parse(JSON.stringify(inlineRefs(load(first) as Record<string, any>))))).toBe(true);
  expect(kept.document.components.schemas.Pet.properties.born.example).toBe('2026-01-01T00:00:00.000Z');
  expect(kept.inlined.components.schemas.Pet.properties.name).toEqual({ type: 'string', maxLength: 10 });
  // Each use of an inlined schema is its own copy, kept or not.
  expect(kept.inlined.components.schemas.Pet.properties.name).not.toBe(kept.inlined.components.schemas.Name);

  // Routing takes the requests' schemas and the answers' statuses, and nothing else.
  expect(kept.routing).toEqual(parsed.routing);
  expect(kept.routing.paths['/pets'].post).toEqual({
    operationId: 'createPet',
    security: [{ bearer: [] }],
    requestBody: kept.inlined.paths['/pets'].post.requestBody,
    responses: { '201': { description: '' }, '400': { description: '' } },
  });
  expect(kept.routing.components).toEqual({ securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } });

  writeFileSync(file, yamlOf('Second'));
  expect(loadContract(file).document.info.title).toBe('Second');
});

it('keeps what it parsed where the next start finds it', () => {
  const kept = path.resolve(__dirname, '../../node_modules/.cache/flows-contract');
  loadContract();
  expect(readdirSync(kept).filter((name) => name.endsWith('.json')).length).toBeGreaterThan(0);
});
