// The contract, what is generated from it, and how it is served.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import request from 'supertest';
import { load as parse } from 'js-yaml';
import { inlineRefs, loadContract } from '../../src/http/contract';
import { projectRoot } from '../../src/lib/paths';
import { startTestApp, type TestApp } from '../support/app';

let app: TestApp;
const contract = loadContract();
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

describe('generated files', () => {
  it('match the contract and the models (npm run generate -- --check)', () => {
    expect(() =>
      execFileSync(process.execPath, [path.join(projectRoot, 'scripts/generate.mjs'), '--check'], { cwd: projectRoot, stdio: 'pipe' }),
    ).not.toThrow();
  });
});

describe('the seed operations of the interface spec', () => {
  const op = (p: string, method: string) => contract.inlined.paths[p]?.[method];
  const scopeOf = (operation: any) => operation.security.flatMap((r: object) => Object.values(r).flat())[0];

  it.each([
    ['/api/v1/job-conditions/test', 'post', 'flows:write'],
    ['/api/v1/jobs', 'post', 'flows:write'],
    ['/api/v1/jobs/{jobId}/invocations', 'post', 'runs:write'],
    ['/api/v1/integrations/agent-integration', 'put', 'flows:write'],
    ['/api/v1/integrations/vmhost/{connectionId}/diagnostics', 'post', 'flows:write'],
    ['/api/v1/vmhost-connections', 'get', 'flows:read'],
    ['/api/v1/access-tokens', 'get', 'flows:read'],
    ['/api/v1/trigger-contexts', 'get', 'flows:read'],
  ])('%s %s needs %s', (p, method, scope) => {
    expect(op(p, method)).toBeDefined();
    expect(scopeOf(op(p, method))).toBe(scope);
  });

  it('list-access-tokens accepts the owner session only', () => {
    expect(op('/api/v1/access-tokens', 'get').security).toEqual([{ svc_session: ['flows:read'] }]);
  });

  it('carries the job limits of spec section 8', () => {
    const job = op('/api/v1/jobs', 'post').requestBody.content['application/json'].schema;
    const p = job.properties;
    expect(job.required).toEqual(expect.arrayContaining(['name', 'promptTemplate']));
    expect([p.name.minLength, p.name.maxLength]).toEqual([1, 120]);
    expect(p.slug.pattern).toBe('^[a-z][a-z0-9_-]{0,29}$');
    expect([p.promptTemplate.minLength, p.promptTemplate.maxLength]).toEqual([1, 50000]);
    expect(p.executionTargetId.minLength).toBe(1);
    expect(p.runNameTemplate.maxLength).toBe(500);
    expect([p.concurrencyLimit.type, p.concurrencyLimit.minimum, p.concurrencyLimit.maximum]).toEqual(['integer', 1, 50]);
    expect(p.model.maxLength).toBe(120);
    expect(p.effort.maxLength).toBe(40);
    expect(p.triggers.maxItems).toBe(50);
    expect(p.triggers.items.oneOf).toHaveLength(4);
  });

  it('has the decision object and the invocation of spec section 2', () => {
    const decision = op('/api/v1/job-conditions/test', 'post').responses['200'].content['application/json'].schema;
    expect(decision.additionalProperties).toBe(false);
    expect(decision.required).toEqual(expect.arrayContaining(['decision', 'details']));
    expect(decision.properties.decision.enum).toEqual(['match', 'no-match', 'error']);
    const invocation = op('/api/v1/jobs/{jobId}/invocations', 'post').responses['202'].content['application/json'].schema;
    expect(Object.keys(invocation.properties).sort()).toEqual(['duplicate', 'invocationId', 'runId', 'state']);
  });

  it('documents the error statuses of spec section 7 on every operation', () => {
    for (const item of Object.values<any>(contract.inlined.paths)) {
      for (const operation of Object.values<any>(item).filter((value) => value?.operationId)) {
        const statuses = Object.keys(operation.responses);
        expect({ id: operation.operationId, missing: ['400', '401', '403', '404', '409', '429', '500', '503'].filter((s) => !statuses.includes(s)) }).toEqual({
          id: operation.operationId,
          missing: [],
        });
        if (operation.requestBody) expect(statuses).toContain('415');
      }
    }
  });
});

describe('the error statuses of the seed operations', () => {
  // Spec section 4: nine error statuses for operations 1 to 5, the same less 415 for 6 to 8.
  const withBody = ['400', '401', '403', '404', '409', '415', '429', '500', '503'];
  const withoutBody = withBody.filter((status) => status !== '415');
  it.each([
    ['/api/v1/job-conditions/test', 'post', withBody],
    ['/api/v1/jobs', 'post', withBody],
    ['/api/v1/jobs/{jobId}/invocations', 'post', withBody],
    ['/api/v1/integrations/agent-integration', 'put', withBody],
    ['/api/v1/integrations/vmhost/{connectionId}/diagnostics', 'post', withBody],
    ['/api/v1/vmhost-connections', 'get', withoutBody],
    ['/api/v1/access-tokens', 'get', withoutBody],
    ['/api/v1/trigger-contexts', 'get', withoutBody],
  ])('%s %s documents exactly them once implemented', (p, method, expected) => {
    const operation = contract.inlined.paths[p][method];
    if (typeof (app.api.backend.handlers as Record<string, unknown>)[operation.operationId] !== 'function') return;
    expect(Object.keys(operation.responses).filter((status) => Number(status) >= 400)).toEqual(expected);
  });
});

describe('501 not_implemented', () => {
  it('is documented exactly on the operations this server does not implement yet', () => {
    const registered = app.api.backend.handlers as Record<string, unknown>;
    for (const item of Object.values<any>(contract.inlined.paths)) {
      for (const operation of Object.values<any>(item).filter((value) => value?.operationId)) {
        const implemented = typeof registered[operation.operationId] === 'function';
        expect({ id: operation.operationId, documents501: '501' in operation.responses }).toEqual({ id: operation.operationId, documents501: !implemented });
      }
    }
  });
});

describe('inlineRefs', () => {
  it('gives every use of a schema its own copy and keeps $ref siblings', () => {
    const doc = { a: { $ref: '#/s/x', description: 'here' }, b: { $ref: '#/s/x' }, s: { x: { type: 'object', properties: { n: { type: 'string' } } } } };
    const inlined = inlineRefs(doc);
    expect(inlined.a).toEqual({ type: 'object', properties: { n: { type: 'string' } }, description: 'here' });
    expect(inlined.a.properties).not.toBe(inlined.b.properties);
  });

  it('refuses a recursive reference', () => {
    expect(() => inlineRefs({ a: { $ref: '#/a' } })).toThrow('recursive');
  });
});

describe('served documents', () => {
  it('serves the document as YAML and JSON', async () => {
    const yaml = await request(app.app).get('/openapi.yaml');
    expect(yaml.status).toBe(200);
    expect(yaml.headers['content-type']).toMatch(/^application\/yaml/);
    expect(parse(yaml.text)).toEqual(contract.document);
    const json = await request(app.app).get('/openapi.json');
    expect(json.body).toEqual(contract.document);
  });

  it('serves Swagger UI from the installed package, with no external assets', async () => {
    const page = await request(app.app).get('/docs');
    expect(page.status).toBe(200);
    expect(page.text).not.toMatch(/https?:\/\//);
    for (const asset of page.text.match(/(?:src|href)="([^"]+)"/g)!.map((m) => m.split('"')[1])) {
      expect({ asset, status: (await request(app.app).get(asset)).status }).toEqual({ asset, status: 200 });
    }
    expect((await request(app.app).get('/docs/init.js')).text).toContain("url: '/openapi.json'");
  });

  it('answers /healthz and /readyz', async () => {
    expect((await request(app.app).get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await request(app.app).get('/readyz')).body).toEqual({ status: 'ready' });
  });
});
