// Every limit of the request schemas, at its boundary: the value just inside passes validation (the
// operation is reached; it answers, or refuses on grounds of its own, or is not built yet: 501); the value
// just outside is refused with 400 `validation_failed` whose message names the field and the rule it breaks.
// Each refused body breaks exactly one rule of an otherwise valid body, since only the first error is reported.
import { startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner } from '../support/identity';

let app: TestApp;
let bearer: Record<string, string>;

beforeAll(async () => {
  app = await startTestApp();
  const owner = await createOwner(app.database.db);
  bearer = { authorization: `Bearer ${await accessToken(app, owner, { scopes: ['flows:read', 'flows:write', 'runs:read', 'runs:write'] })}` };
});
afterAll(() => app.close());

/** A string of exactly `n` characters. */
const str = (n: number, char = 'x') => char.repeat(n);
/** An array of `n` copies of `item`. */
const times = <T>(n: number, item: T): T[] => Array.from({ length: n }, () => item);
/** A copy of `body` without `key`. */
function without<T extends object>(body: T, key: keyof T): Partial<T> {
  const copy = { ...body };
  delete copy[key];
  return copy;
}

/**
 * The Ajv keyword the message must carry (alternatives separated by `|`), or `required` /
 * `additionalProperties`, whose messages read "`field` is required." and "`field` is not an allowed property.".
 */
type Rule = string;
/** A body (or path) that must pass validation. */
type Inside = [label: string, body: unknown];
/** A body (or path) that must be refused, naming `field` and `rule`. */
type Outside = [label: string, body: unknown, field: string, rule: Rule];

/**
 * The value passed validation: the operation ran. It may still refuse the body on its own grounds (an
 * unknown job, a webhook source that does not exist), but never with a schema rule; unbuilt operations
 * answer 501.
 */
function expectPasses(res: { status: number; body: any }) {
  const message: string = res.body?.error?.message ?? '';
  const schemaRule = res.body?.error?.code === 'validation_failed' && /(\(\w+\)\.|is required\.|is not an allowed property\.)$/.test(message);
  expect({ status: res.status, schemaRule: schemaRule ? message : null }).toEqual({ status: expect.any(Number), schemaRule: null });
  expect([200, 201, 202, 204, 400, 404, 409, 501]).toContain(res.status);
}

function expectRefused(res: { status: number; body: any }, field: string, rule: Rule) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 400, code: 'validation_failed' });
  const message: string = res.body.error.message;
  if (field === 'body' && rule === 'required') {
    expect(message).toBe('The request body is required.');
  } else if (rule === 'required') {
    expect(message).toContain(`\`${field}\` is required.`);
  } else if (rule === 'additionalProperties') {
    expect(message).toContain(`\`${field}\` is not an allowed property.`);
  } else {
    expect(message).toMatch(new RegExp(`^\`${escapeRegExp(field)}\` .*\\((?:${rule})\\)\\.$`));
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const post = (path: string, body: unknown) => call(app, 'POST', path, { headers: bearer, body });
const patch = (path: string, body: unknown) => call(app, 'PATCH', path, { headers: bearer, body });
const put = (path: string, body: unknown) => call(app, 'PUT', path, { headers: bearer, body });

// ---------------------------------------------------------------------------------------------------
// Jobs

const base = { name: 'Triage', promptTemplate: 'Do it' };
const job = (extra: Record<string, unknown>) => ({ ...base, ...extra });

const webhookTrigger = { type: 'webhook', sourceId: 'src_1', events: ['issues.opened'] };
const scheduleTrigger = { type: 'schedule', cron: '0 3 * * *' };
const runTrigger = { type: 'run', jobId: 'job_x', states: ['succeeded'] };
const invocationTrigger = { type: 'invocation' };

describe('createJob: POST /api/v1/jobs', () => {
  const inside: Inside[] = [
    ['the base body', base],
    ['name of 1 character', job({ name: str(1) })],
    ['name of 120 characters', job({ name: str(120) })],
    ['slug of 1 letter', job({ slug: 'a' })],
    ['slug of 30 characters', job({ slug: `a${str(29, 'b')}` })],
    ['slug with digits, hyphen and underscore', job({ slug: 'a-b_c9' })],
    ['promptTemplate of 1 character', job({ promptTemplate: str(1) })],
    ['promptTemplate of 50000 characters', job({ promptTemplate: str(50000) })],
    ['executionTargetId of 1 character', job({ executionTargetId: 'x' })],
    ['runNameTemplate of 500 characters', job({ runNameTemplate: str(500) })],
    ['empty runNameTemplate', job({ runNameTemplate: '' })],
    ['concurrencyLimit 1', job({ concurrencyLimit: 1 })],
    ['concurrencyLimit 50', job({ concurrencyLimit: 50 })],
    ['model of 120 characters', job({ model: str(120) })],
    ['effort of 40 characters', job({ effort: str(40) })],
    ['no triggers', job({ triggers: [] })],
    ['50 triggers', job({ triggers: times(50, invocationTrigger) })],
    ['a minimal webhook trigger', job({ triggers: [webhookTrigger] })],
    ['a minimal schedule trigger', job({ triggers: [scheduleTrigger] })],
    ['a minimal run trigger', job({ triggers: [runTrigger] })],
    ['a minimal invocation trigger', job({ triggers: [invocationTrigger] })],
    ['one trigger of each shape', job({ triggers: [webhookTrigger, scheduleTrigger, runTrigger, invocationTrigger] })],
    [
      'every field at its upper limit',
      {
        name: str(120),
        slug: `z${str(29, '9')}`,
        promptTemplate: str(50000),
        executionTargetId: 'tgt_1',
        runNameTemplate: str(500),
        concurrencyLimit: 50,
        model: str(120),
        effort: str(40),
        triggers: times(50, scheduleTrigger),
      },
    ],
  ];

  const outside: Outside[] = [
    ['empty name', job({ name: '' }), 'name', 'minLength'],
    ['name of 121 characters', job({ name: str(121) }), 'name', 'maxLength'],
    ['name missing', without(base, 'name'), 'name', 'required'],
    ['name not a string', job({ name: 7 }), 'name', 'type'],
    ['slug of 31 characters', job({ slug: `a${str(30, 'b')}` }), 'slug', 'pattern'],
    ['slug starting with a digit', job({ slug: '9abc' }), 'slug', 'pattern'],
    ['slug with an upper-case letter', job({ slug: 'Abc' }), 'slug', 'pattern'],
    ['slug with a space', job({ slug: 'a b' }), 'slug', 'pattern'],
    ['empty slug', job({ slug: '' }), 'slug', 'pattern'],
    ['empty promptTemplate', job({ promptTemplate: '' }), 'promptTemplate', 'minLength'],
    ['promptTemplate of 50001 characters', job({ promptTemplate: str(50001) }), 'promptTemplate', 'maxLength'],
    ['promptTemplate missing', without(base, 'promptTemplate'), 'promptTemplate', 'required'],
    ['empty executionTargetId', job({ executionTargetId: '' }), 'executionTargetId', 'minLength'],
    ['runNameTemplate of 501 characters', job({ runNameTemplate: str(501) }), 'runNameTemplate', 'maxLength'],
    ['concurrencyLimit 0', job({ concurrencyLimit: 0 }), 'concurrencyLimit', 'minimum'],
    ['concurrencyLimit 51', job({ concurrencyLimit: 51 }), 'concurrencyLimit', 'maximum'],
    ['concurrencyLimit 1.5', job({ concurrencyLimit: 1.5 }), 'concurrencyLimit', 'type'],
    ['concurrencyLimit "3"', job({ concurrencyLimit: '3' }), 'concurrencyLimit', 'type'],
    ['model of 121 characters', job({ model: str(121) }), 'model', 'maxLength'],
    ['effort of 41 characters', job({ effort: str(41) }), 'effort', 'maxLength'],
    ['51 triggers', job({ triggers: times(51, invocationTrigger) }), 'triggers', 'maxItems'],
    ['triggers not an array', job({ triggers: invocationTrigger }), 'triggers', 'type'],
    ['an unknown property', job({ foo: 1 }), 'foo', 'additionalProperties'],
    ['a read-only property of the job record', job({ enabled: true }), 'enabled', 'additionalProperties'],
    ['a JSON array as the body', [base], 'body', 'type'],
  ];

  it.each(inside)('passes %s', async (_label, body) => {
    expectPasses(await post('/api/v1/jobs', body));
  });

  it.each(outside)('refuses %s', async (_label, body, field, rule) => {
    expectRefused(await post('/api/v1/jobs', body), field, rule);
  });

  it('refuses a missing body', async () => {
    expectRefused(await call(app, 'POST', '/api/v1/jobs', { headers: bearer }), 'body', 'required');
  });
});

describe('trigger shapes in createJob', () => {
  const withTrigger = (trigger: unknown) => job({ triggers: [trigger] });
  const cond = { path: 'event', op: 'eq', value: 'issues' };
  const withConditions = (conditions: unknown) => withTrigger({ ...webhookTrigger, conditions });

  const inside: Inside[] = [
    // every trigger shape: id and enabled
    ['trigger id of 1 character', withTrigger({ ...invocationTrigger, id: 't' })],
    ['trigger id of 64 characters', withTrigger({ ...webhookTrigger, id: str(64) })],
    ['a disabled trigger', withTrigger({ ...scheduleTrigger, enabled: false })],
    // WebhookTrigger
    ['webhook sourceId of 1 character', withTrigger({ ...webhookTrigger, sourceId: 's' })],
    ['webhook with 50 events', withTrigger({ ...webhookTrigger, events: times(50, 'issues.*') })],
    ['webhook event pattern of 1 character', withTrigger({ ...webhookTrigger, events: ['*'] })],
    ['webhook event pattern of 200 characters', withTrigger({ ...webhookTrigger, events: [str(200)] })],
    ['webhook with empty conditions', withConditions({})],
    // Conditions and Cond
    ['conditions with every part', withConditions({ all: [cond], any: [cond], none: [cond], if: 'event == "issues"' })],
    ['conditions.all of 50 leaves', withConditions({ all: times(50, cond) })],
    ['conditions.any of 50 leaves', withConditions({ any: times(50, cond) })],
    ['conditions.none of 50 leaves', withConditions({ none: times(50, cond) })],
    ['conditions.if of 4000 characters', withConditions({ if: str(4000) })],
    ['a leaf path of 1 character', withConditions({ all: [{ ...cond, path: 'a' }] })],
    ['a leaf path of 500 characters', withConditions({ all: [{ ...cond, path: str(500) }] })],
    ['a leaf without value', withConditions({ all: [{ path: 'payload.issue', op: 'exists' }] })],
    ...['eq', 'neq', 'in', 'nin', 'contains', 'startsWith', 'endsWith', 'matches', 'exists', 'gt', 'gte', 'lt', 'lte'].map(
      (op): Inside => [`a leaf with op ${op}`, withConditions({ all: [{ ...cond, op }] })],
    ),
    // ScheduleTrigger
    ['cron of 9 characters', withTrigger({ ...scheduleTrigger, cron: '* * * * *' })],
    ['cron of 120 characters', withTrigger({ ...scheduleTrigger, cron: `0 3 * * *${str(111, ' ')}` })],
    ['timezone of 64 characters', withTrigger({ ...scheduleTrigger, timezone: str(64) })],
    ['schedule data', withTrigger({ ...scheduleTrigger, data: { task: 'x' } })],
    // RunTrigger
    ['run jobId of 1 character', withTrigger({ ...runTrigger, jobId: 'j' })],
    ['run with every terminal state', withTrigger({ ...runTrigger, states: ['succeeded', 'failed', 'timed_out', 'canceled'] })],
    ['run with 6 states', withTrigger({ ...runTrigger, states: times(6, 'failed') })],
    ['run with conditions', withTrigger({ ...runTrigger, conditions: { all: [{ path: 'state', op: 'eq', value: 'succeeded' }] } })],
    // InvocationTrigger
    ['invocation inputSchema and defaultData', withTrigger({ ...invocationTrigger, inputSchema: { type: 'object' }, defaultData: {} })],
  ];

  const outside: Outside[] = [
    ['an unknown trigger type', withTrigger({ type: 'email' }), 'triggers[0].type', 'discriminator|const|enum'],
    ['a trigger without type', withTrigger({ sourceId: 'src_1', events: ['issues.opened'] }), 'triggers[0].type', 'required'],
    // every trigger shape: id and enabled
    ['empty trigger id', withTrigger({ ...invocationTrigger, id: '' }), 'triggers[0].id', 'minLength'],
    ['trigger id of 65 characters', withTrigger({ ...webhookTrigger, id: str(65) }), 'triggers[0].id', 'maxLength'],
    ['trigger enabled not a boolean', withTrigger({ ...scheduleTrigger, enabled: 'yes' }), 'triggers[0].enabled', 'type'],
    // WebhookTrigger
    ['webhook without sourceId', withTrigger(without(webhookTrigger, 'sourceId')), 'triggers[0].sourceId', 'required'],
    ['webhook without events', withTrigger(without(webhookTrigger, 'events')), 'triggers[0].events', 'required'],
    ['empty webhook sourceId', withTrigger({ ...webhookTrigger, sourceId: '' }), 'triggers[0].sourceId', 'minLength'],
    ['webhook with no events', withTrigger({ ...webhookTrigger, events: [] }), 'triggers[0].events', 'minItems'],
    ['webhook with 51 events', withTrigger({ ...webhookTrigger, events: times(51, 'issues.*') }), 'triggers[0].events', 'maxItems'],
    ['empty webhook event pattern', withTrigger({ ...webhookTrigger, events: [''] }), 'triggers[0].events[0]', 'minLength'],
    ['webhook event pattern of 201 characters', withTrigger({ ...webhookTrigger, events: [str(201)] }), 'triggers[0].events[0]', 'maxLength'],
    ['webhook with a property of another shape', withTrigger({ ...webhookTrigger, cron: '0 3 * * *' }), 'triggers[0].cron', 'additionalProperties'],
    // Conditions and Cond
    ['conditions.all of 51 leaves', withConditions({ all: times(51, cond) }), 'triggers[0].conditions.all', 'maxItems'],
    ['conditions.any of 51 leaves', withConditions({ any: times(51, cond) }), 'triggers[0].conditions.any', 'maxItems'],
    ['conditions.none of 51 leaves', withConditions({ none: times(51, cond) }), 'triggers[0].conditions.none', 'maxItems'],
    ['conditions.if of 4001 characters', withConditions({ if: str(4001) }), 'triggers[0].conditions.if', 'maxLength'],
    ['an unknown conditions part', withConditions({ some: [cond] }), 'triggers[0].conditions.some', 'additionalProperties'],
    ['conditions not an object', withConditions([cond]), 'triggers[0].conditions', 'type'],
    ['an empty leaf path', withConditions({ all: [{ ...cond, path: '' }] }), 'triggers[0].conditions.all[0].path', 'minLength'],
    ['a leaf path of 501 characters', withConditions({ all: [{ ...cond, path: str(501) }] }), 'triggers[0].conditions.all[0].path', 'maxLength'],
    ['a leaf without path', withConditions({ all: [without(cond, 'path')] }), 'triggers[0].conditions.all[0].path', 'required'],
    ['a leaf without op', withConditions({ any: [without(cond, 'op')] }), 'triggers[0].conditions.any[0].op', 'required'],
    ['a leaf with an unknown op', withConditions({ none: [{ ...cond, op: 'like' }] }), 'triggers[0].conditions.none[0].op', 'enum'],
    ['a leaf with an unknown property', withConditions({ all: [{ ...cond, negate: true }] }), 'triggers[0].conditions.all[0].negate', 'additionalProperties'],
    // ScheduleTrigger
    ['schedule without cron', withTrigger(without(scheduleTrigger, 'cron')), 'triggers[0].cron', 'required'],
    ['cron of 8 characters', withTrigger({ ...scheduleTrigger, cron: '* * * * ' }), 'triggers[0].cron', 'minLength'],
    ['cron of 121 characters', withTrigger({ ...scheduleTrigger, cron: `0 3 * * *${str(112, ' ')}` }), 'triggers[0].cron', 'maxLength'],
    ['timezone of 65 characters', withTrigger({ ...scheduleTrigger, timezone: str(65) }), 'triggers[0].timezone', 'maxLength'],
    ['schedule data not an object', withTrigger({ ...scheduleTrigger, data: 'x' }), 'triggers[0].data', 'type'],
    // RunTrigger
    ['run without jobId', withTrigger(without(runTrigger, 'jobId')), 'triggers[0].jobId', 'required'],
    ['run without states', withTrigger(without(runTrigger, 'states')), 'triggers[0].states', 'required'],
    ['empty run jobId', withTrigger({ ...runTrigger, jobId: '' }), 'triggers[0].jobId', 'minLength'],
    ['run with no states', withTrigger({ ...runTrigger, states: [] }), 'triggers[0].states', 'minItems'],
    ['run with 7 states', withTrigger({ ...runTrigger, states: times(7, 'failed') }), 'triggers[0].states', 'maxItems'],
    ['run with a non-terminal state', withTrigger({ ...runTrigger, states: ['running'] }), 'triggers[0].states[0]', 'enum'],
    // InvocationTrigger
    ['invocation inputSchema not an object', withTrigger({ ...invocationTrigger, inputSchema: true }), 'triggers[0].inputSchema', 'type'],
    ['invocation defaultData not an object', withTrigger({ ...invocationTrigger, defaultData: [] }), 'triggers[0].defaultData', 'type'],
    // the position is named
    ['a bad second trigger', job({ triggers: [invocationTrigger, { ...scheduleTrigger, cron: 'x' }] }), 'triggers[1].cron', 'minLength'],
  ];

  it.each(inside)('passes %s', async (_label, body) => {
    expectPasses(await post('/api/v1/jobs', body));
  });

  it.each(outside)('refuses %s', async (_label, body, field, rule) => {
    expectRefused(await post('/api/v1/jobs', body), field, rule);
  });
});

describe('updateJob: PATCH /api/v1/jobs/{jobId}', () => {
  const inside: Inside[] = [
    ['name of 120 characters', { name: str(120) }],
    ['concurrencyLimit 50', { concurrencyLimit: 50 }],
    ['slug of 30 characters', { slug: `a${str(29)}` }],
    ['promptTemplate of 50000 characters', { promptTemplate: str(50000) }],
    ['no triggers', { triggers: [] }],
    ['50 triggers', { triggers: times(50, invocationTrigger) }],
  ];

  const outside: Outside[] = [
    ['no property', {}, 'body', 'minProperties'],
    ['name of 121 characters', { name: str(121) }, 'name', 'maxLength'],
    ['empty name', { name: '' }, 'name', 'minLength'],
    ['concurrencyLimit 51', { concurrencyLimit: 51 }, 'concurrencyLimit', 'maximum'],
    ['concurrencyLimit 0', { concurrencyLimit: 0 }, 'concurrencyLimit', 'minimum'],
    ['slug of 31 characters', { slug: `a${str(30)}` }, 'slug', 'pattern'],
    ['empty promptTemplate', { promptTemplate: '' }, 'promptTemplate', 'minLength'],
    ['runNameTemplate of 501 characters', { runNameTemplate: str(501) }, 'runNameTemplate', 'maxLength'],
    ['model of 121 characters', { model: str(121) }, 'model', 'maxLength'],
    ['effort of 41 characters', { effort: str(41) }, 'effort', 'maxLength'],
    ['51 triggers', { triggers: times(51, invocationTrigger) }, 'triggers', 'maxItems'],
    ['an unknown property', { foo: 1 }, 'foo', 'additionalProperties'],
  ];

  it.each(inside)('passes %s', async (_label, body) => {
    expectPasses(await patch('/api/v1/jobs/job_x', body));
  });

  it.each(outside)('refuses %s', async (_label, body, field, rule) => {
    expectRefused(await patch('/api/v1/jobs/job_x', body), field, rule);
  });

  it('passes a jobId of 200 characters', async () => {
    expectPasses(await patch(`/api/v1/jobs/${str(200, 'j')}`, { name: 'x' }));
  });

  it('refuses a jobId of 201 characters', async () => {
    expectRefused(await patch(`/api/v1/jobs/${str(201, 'j')}`, { name: 'x' }), 'jobId', 'maxLength');
  });
});

// ---------------------------------------------------------------------------------------------------
// Invocations

describe('invokeJob: POST /api/v1/jobs/{jobId}/invocations', () => {
  const path = '/api/v1/jobs/job_x/invocations';

  const inside: Inside[] = [
    ['an empty object', {}],
    ['idempotencyKey of 1 character', { idempotencyKey: 'k' }],
    ['idempotencyKey of 255 characters', { idempotencyKey: str(255) }],
    ['empty data', { data: {} }],
    ['nested data', { data: { issue: { number: 42, labels: ['bug'] } } }],
    ['prompt of 50000 characters', { prompt: str(50000) }],
    ['empty prompt', { prompt: '' }],
    ['name of 500 characters', { name: str(500) }],
    ['every field', { prompt: 'p', data: { a: 1 }, name: 'n', idempotencyKey: 'k' }],
  ];

  const outside: Outside[] = [
    ['empty idempotencyKey', { idempotencyKey: '' }, 'idempotencyKey', 'minLength'],
    ['idempotencyKey of 256 characters', { idempotencyKey: str(256) }, 'idempotencyKey', 'maxLength'],
    ['data as an array', { data: [1, 2] }, 'data', 'type'],
    ['data as a string', { data: 'x' }, 'data', 'type'],
    ['data as null', { data: null }, 'data', 'type'],
    ['prompt of 50001 characters', { prompt: str(50001) }, 'prompt', 'maxLength'],
    ['name of 501 characters', { name: str(501) }, 'name', 'maxLength'],
    ['an unknown property', { priority: 1 }, 'priority', 'additionalProperties'],
    ['a JSON array as the body', [], 'body', 'type'],
  ];

  it.each(inside)('passes %s', async (_label, body) => {
    expectPasses(await post(path, body));
  });

  it.each(outside)('refuses %s', async (_label, body, field, rule) => {
    expectRefused(await post(path, body), field, rule);
  });

  it('passes a jobId of 1 character', async () => {
    expectPasses(await post('/api/v1/jobs/j/invocations', {}));
  });

  it('passes a jobId of 200 characters', async () => {
    expectPasses(await post(`/api/v1/jobs/${str(200, 'j')}/invocations`, {}));
  });

  it('refuses a jobId of 201 characters', async () => {
    expectRefused(await post(`/api/v1/jobs/${str(201, 'j')}/invocations`, {}), 'jobId', 'maxLength');
  });

  it('never reaches the operation with an empty jobId', async () => {
    const res = await post('/api/v1/jobs//invocations', {});
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(Object.keys(res.body)).toEqual(['error']);
  });
});

// ---------------------------------------------------------------------------------------------------
// Conditions test

describe('testJobConditions: POST /api/v1/job-conditions/test', () => {
  const path = '/api/v1/job-conditions/test';

  const inside: Inside[] = [
    ['an empty webhook', { webhook: {} }],
    ['a webhook context', { webhook: { event: 'issues', payload: { issue: { number: 42 } } } }],
    ['conditions as an object', { webhook: {}, conditions: { all: [{ path: 'event', op: 'eq', value: 'issues' }] } }],
    ['empty conditions', { webhook: {}, conditions: {} }],
    // conditions are loosely typed on purpose: a malformed condition is an `error` decision, not a 400
    ['conditions that break the Conditions schema', { webhook: {}, conditions: { all: [{ op: 'like' }], some: 1 } }],
  ];

  const outside: Outside[] = [
    ['webhook missing', {}, 'webhook', 'required'],
    ['webhook missing next to conditions', { conditions: {} }, 'webhook', 'required'],
    ['webhook as a string', { webhook: 'issues' }, 'webhook', 'type'],
    ['webhook as an array', { webhook: [] }, 'webhook', 'type'],
    ['webhook as null', { webhook: null }, 'webhook', 'type'],
    ['conditions as an array', { webhook: {}, conditions: [] }, 'conditions', 'type'],
    ['conditions as a string', { webhook: {}, conditions: 'event == "issues"' }, 'conditions', 'type'],
    ['an extra top-level property', { webhook: {}, jobId: 'job_x' }, 'jobId', 'additionalProperties'],
    ['a JSON array as the body', [{ webhook: {} }], 'body', 'type'],
  ];

  // Implemented: passing validation means a decision.
  it.each(inside)('passes %s', async (_label, body) => {
    const res = await post(path, body);
    expect(res.status).toBe(200);
    expect(['match', 'no-match', 'error']).toContain(res.body.decision);
  });

  it.each(outside)('refuses %s', async (_label, body, field, rule) => {
    expectRefused(await post(path, body), field, rule);
  });
});

// ---------------------------------------------------------------------------------------------------
// Agent integration

describe('putAgentIntegration: PUT /api/v1/integrations/agent-integration', () => {
  const path = '/api/v1/integrations/agent-integration';
  const integration = {
    accessToken: 'agt_live_3f9a8b7c6d5e4f3a2b1c',
    project: 'acme-platform',
    connectionId: 'vmc_6b1x4j8n2w7h',
    apiBaseUrl: 'https://api.agent.example.com',
  };
  const withField = (extra: Record<string, unknown>) => ({ ...integration, ...extra });
  const urlOf = (n: number) => {
    const prefix = 'https://agent.example.com/';
    return prefix + str(n - prefix.length, 'a');
  };

  const inside: Inside[] = [
    ['a complete body', integration],
    ['no connectionId (optional)', without(integration, 'connectionId')],
    ['accessToken of 1 character', withField({ accessToken: 'a' })],
    ['accessToken of 4096 characters', withField({ accessToken: str(4096) })],
    ['project of 1 character', withField({ project: 'p' })],
    ['project of 200 characters', withField({ project: str(200) })],
    ['connectionId of 1 character', withField({ connectionId: 'c' })],
    ['connectionId of 200 characters', withField({ connectionId: str(200) })],
    ['apiBaseUrl of 2000 characters', withField({ apiBaseUrl: urlOf(2000) })],
    ['apiBaseUrl with a port and path', withField({ apiBaseUrl: 'http://localhost:8080/v1' })],
  ];

  const outside: Outside[] = [
    ['accessToken missing', without(integration, 'accessToken'), 'accessToken', 'required'],
    ['project missing', without(integration, 'project'), 'project', 'required'],
    ['apiBaseUrl missing', without(integration, 'apiBaseUrl'), 'apiBaseUrl', 'required'],
    ['empty accessToken', withField({ accessToken: '' }), 'accessToken', 'minLength'],
    ['accessToken of 4097 characters', withField({ accessToken: str(4097) }), 'accessToken', 'maxLength'],
    ['empty project', withField({ project: '' }), 'project', 'minLength'],
    ['project of 201 characters', withField({ project: str(201) }), 'project', 'maxLength'],
    ['empty connectionId', withField({ connectionId: '' }), 'connectionId', 'minLength'],
    ['connectionId of 201 characters', withField({ connectionId: str(201) }), 'connectionId', 'maxLength'],
    ['apiBaseUrl that is not a URL', withField({ apiBaseUrl: 'not a url' }), 'apiBaseUrl', 'format'],
    ['apiBaseUrl without a scheme', withField({ apiBaseUrl: 'api.agent.example.com' }), 'apiBaseUrl', 'format'],
    ['apiBaseUrl of 2001 characters', withField({ apiBaseUrl: urlOf(2001) }), 'apiBaseUrl', 'maxLength'],
    ['accessToken not a string', withField({ accessToken: 12345 }), 'accessToken', 'type'],
    ['an unknown property', withField({ region: 'eu' }), 'region', 'additionalProperties'],
    ['an empty body', {}, 'accessToken', 'required'],
  ];

  it.each(inside)('passes %s', async (_label, body) => {
    expectPasses(await put(path, body));
  });

  it.each(outside)('refuses %s', async (_label, body, field, rule) => {
    expectRefused(await put(path, body), field, rule);
  });
});
