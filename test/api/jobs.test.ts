// Jobs through the API: createJob, listJobs, getJob, updateJob, deleteJob, enableJob and disableJob, by id
// and by slug, with everything a job is checked for before it is saved, its limits, its scopes and its tenant.
import type { Response } from 'supertest';
import { BODY_LIMIT } from '../../src/http/body';
import { BASE_URL, startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner, sessionCookie, type TestOwner } from '../support/identity';

type Headers = Record<string, string>;
type Body = Record<string, unknown>;

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const JOBS = '/api/v1/jobs';
const job = (extra: Body = {}): Body => ({ name: 'Triage', promptTemplate: 'Look at {{ job.name }}', ...extra });
const str = (n: number, char = 'x') => char.repeat(n);
const times = <T>(n: number, item: T): T[] => Array.from({ length: n }, () => item);

/** The job operations as one caller (bearer token or session) makes them. */
function jobsApi(headers: Headers, target: TestApp = app) {
  const at = (ref: string, action = '') => `${JOBS}/${encodeURIComponent(ref)}${action}`;
  const send = (method: string, path: string, body?: unknown) => call(target, method, path, { headers, body });
  return {
    create: (body: Body) => send('POST', JOBS, body),
    list: (query = '') => send('GET', `${JOBS}${query}`),
    get: (ref: string) => send('GET', at(ref)),
    update: (ref: string, body: Body) => send('PATCH', at(ref), body),
    remove: (ref: string) => send('DELETE', at(ref)),
    enable: (ref: string) => send('POST', at(ref, '/enable')),
    disable: (ref: string) => send('POST', at(ref, '/disable')),
    /** Any path, e.g. a `Link` header's URL, as given. */
    fetch: (path: string) => send('GET', path),
  };
}
type JobsApi = ReturnType<typeof jobsApi>;

/** A new tenant whose owner calls with a bearer token of `scopes`. */
async function newTenant(scopes = ['flows:read', 'flows:write'], target: TestApp = app): Promise<{ owner: TestOwner; jobs: JobsApi }> {
  const owner = await createOwner(target.database.db);
  return { owner, jobs: jobsApi({ authorization: `Bearer ${await accessToken(target, owner, { scopes })}` }, target) };
}

/** The answer of a call that must succeed with `status`; shows the error in the failure when it did not. */
function expectStatus(res: Response, status: number): any {
  expect({ status: res.status, error: res.body?.error }).toEqual({ status, error: undefined });
  return res.body;
}
const created = async (res: Promise<Response>) => expectStatus(await res, 201);

/** An error answer: `status`, `code`, and a message containing every fragment. */
function expectError(res: Response, status: number, code: string, ...fragments: string[]) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  for (const fragment of fragments) expect(res.body.error.message).toContain(fragment);
}

/** A job as stored, triggers included, to prove that a refused request changed nothing. */
const jobRow = (id: string) => app.database.db.job.findUnique({ where: { id }, include: { triggers: { orderBy: { position: 'asc' } } } });
const jobCount = () => app.database.db.job.count();

async function expectRefusedAndNothingSaved(request: () => Promise<Response>, status: number, code: string, ...fragments: string[]) {
  const before = await jobCount();
  expectError(await request(), status, code, ...fragments);
  expect(await jobCount()).toBe(before);
}

/** A webhook source of the tenant, inserted directly (the source operations are not under test here). */
async function webhookSource(owner: TestOwner, id: string) {
  await app.database.db.webhookSource.create({ data: { id, tenantId: owner.tenantId, name: id, format: 'github', secretCiphertext: 'x' } });
  return id;
}

/** The URL of a `Link: <url>; rel="next"` header, or null on the last page. */
function nextLink(res: Response): string | null {
  const link = res.headers.link as string | undefined;
  if (link === undefined) return null;
  const match = /^<([^>]+)>; rel="next"$/.exec(link);
  expect(match).not.toBeNull();
  return match![1];
}

describe('create', () => {
  let jobs: JobsApi;
  beforeAll(async () => ({ jobs } = await newTenant()));

  it('answers 201 with the job, its Location, enabled, the defaults, and every trigger given an id and enabled', async () => {
    const body = job({
      name: 'Fix labelled issues',
      triggers: [{ type: 'invocation' }, { id: 'trg_nightly_create', type: 'schedule', cron: '0 3 * * 1-5' }, { type: 'invocation', enabled: false }],
    });
    const res = await jobs.create(body);
    const made = expectStatus(res, 201);
    expect(res.headers.location).toBe(`/api/v1/jobs/${made.id}`);
    expect(made).toEqual({
      id: expect.stringMatching(/^job_/),
      name: 'Fix labelled issues',
      slug: 'fix-labelled-issues',
      promptTemplate: body.promptTemplate,
      executionTargetId: null,
      runNameTemplate: null,
      concurrencyLimit: 1,
      model: null,
      effort: null,
      agent: { kind: 'command' },
      env: {},
      flowControl: {},
      enabled: true,
      triggers: [
        { id: expect.stringMatching(/^trg_/), enabled: true, type: 'invocation' },
        { id: 'trg_nightly_create', enabled: true, type: 'schedule', cron: '0 3 * * 1-5' },
        { id: expect.stringMatching(/^trg_/), enabled: false, type: 'invocation' },
      ],
      createdAt: expect.stringMatching(/Z$/),
      updatedAt: expect.stringMatching(/Z$/),
      // This server has no local agent, so a job naming no target has nowhere to run yet.
      warnings: [{ field: 'executionTargetId', message: expect.stringContaining('this server has no default target') }],
    });
    expect(new Set(made.triggers.map((trigger: { id: string }) => trigger.id)).size).toBe(3);
    expect(expectStatus(await jobs.get(made.id), 200)).toEqual(made);
  });

  it('keeps every field given', async () => {
    const fields = { runNameTemplate: 'Issue {{ data.issue }}', concurrencyLimit: 3, model: 'large', effort: 'high', slug: 'all-fields' };
    expect(await created(jobs.create(job(fields)))).toMatchObject(fields);
  });

  it('keeps a network allowlist, refuses one that names no domain, and removes it with null', async () => {
    const made = await created(jobs.create(job({ network: { allow: ['api.anthropic.com', '*.npmjs.org'] } })));
    expect(made.network).toEqual({ allow: ['api.anthropic.com', '*.npmjs.org'] });
    expect(expectStatus(await jobs.get(made.id), 200).network).toEqual({ allow: ['api.anthropic.com', '*.npmjs.org'] });
    const refused = await jobs.create(job({ network: { allow: ['github.com', '10.0.0.1'] } }));
    expect([refused.status, refused.body]).toEqual([400, { error: { code: 'validation_failed', message: '`network.allow[1]`: 10.0.0.1 is an address; name a domain.' } }]);
    expect(expectStatus(await jobs.update(made.id, { network: { allow: [] } }), 200).network).toEqual({ allow: [] });
    const removed = expectStatus(await jobs.update(made.id, { network: null }), 200);
    expect('network' in removed).toBe(false);
    expect('network' in expectStatus(await jobs.get(made.id), 200)).toBe(false);
  });

  it('refuses two triggers with the same id with 400 validation_failed, saving nothing', async () => {
    const twice = { id: 'trg_twice', type: 'invocation' };
    await expectRefusedAndNothingSaved(() => jobs.create(job({ triggers: [twice, twice] })), 400, 'validation_failed', '`triggers[1].id`');
  });

  // A trigger id is unique within its job (contract: TriggerIdentity), so another job may reuse it.
  it('lets another job of the tenant use a trigger id a job has', async () => {
    const shared = { id: 'trg_shared_tenant', type: 'invocation' };
    await created(jobs.create(job({ triggers: [shared] })));
    expect((await created(jobs.create(job({ triggers: [shared] })))).triggers[0].id).toBe('trg_shared_tenant');
  });

  it('lets a job of another tenant use a trigger id a job has', async () => {
    const shared = { id: 'trg_shared_tenants', type: 'invocation' };
    await created(jobs.create(job({ triggers: [shared] })));
    await created((await newTenant()).jobs.create(job({ slug: 'other-tenant', triggers: [shared] })));
  });

  it('lets an update give a job a trigger id another job has', async () => {
    await created(jobs.create(job({ triggers: [{ id: 'trg_shared_update', type: 'invocation' }] })));
    const other = await created(jobs.create(job()));
    expectStatus(await jobs.update(other.id, { triggers: [{ id: 'trg_shared_update', type: 'invocation' }] }), 200);
  });
});

describe('slugs', () => {
  let jobs: JobsApi;
  beforeAll(async () => ({ jobs } = await newTenant()));

  it('derives the slug from the name, numbering repeats, and uses `job` for a name with no letters', async () => {
    expect((await created(jobs.create(job({ name: 'Fix labelled issues!' })))).slug).toBe('fix-labelled-issues');
    expect((await created(jobs.create(job({ name: 'Fix labelled issues!' })))).slug).toBe('fix-labelled-issues-2');
    expect((await created(jobs.create(job({ name: '1234 !!! 56' })))).slug).toBe('job');
  });

  it('refuses a chosen slug another job has with 409 slug_taken, saving nothing', async () => {
    await created(jobs.create(job({ slug: 'chosen' })));
    await expectRefusedAndNothingSaved(() => jobs.create(job({ slug: 'chosen' })), 409, 'slug_taken');
  });

  it('frees the slug of a deleted job for a new one', async () => {
    const first = await created(jobs.create(job({ slug: 'reused' })));
    expectStatus(await jobs.remove(first.id), 204);
    const second = await created(jobs.create(job({ slug: 'reused' })));
    expect(expectStatus(await jobs.get('reused'), 200).id).toBe(second.id);
  });

  it('refuses an update to another job\'s slug with 409 slug_taken, changing nothing', async () => {
    await created(jobs.create(job({ slug: 'taken-by-one' })));
    const other = await created(jobs.create(job({ slug: 'the-other' })));
    const before = await jobRow(other.id);
    expectError(await jobs.update(other.id, { slug: 'taken-by-one', name: 'Renamed' }), 409, 'slug_taken');
    expect(await jobRow(other.id)).toEqual(before);
  });

  // Ids fit the slug pattern, so a slug may spell another job's id; the id must still name its own job.
  it('answers a job\'s id with that job even when another job\'s slug spells it', async () => {
    const older = await created(jobs.create(job({ slug: 'older' })));
    const newer = await created(jobs.create(job({ slug: older.id })));
    expectStatus(await jobs.update(older.id, { slug: newer.id }), 200);
    expect(expectStatus(await jobs.get(older.id), 200).id).toBe(older.id);
    expect(expectStatus(await jobs.get(newer.id), 200).id).toBe(newer.id);
    expectStatus(await jobs.disable(newer.id), 200);
    expect(await jobRow(older.id)).toMatchObject({ enabled: true });
  });
});

describe('get, update, enable, disable and delete, by id and by slug', () => {
  let jobs: JobsApi;
  beforeAll(async () => ({ jobs } = await newTenant()));

  it.each(['id', 'slug'] as const)('gets a job by its %s, and answers 404 not_found for no job', async (key) => {
    const made = await created(jobs.create(job({ slug: `get-by-${key}` })));
    expect(expectStatus(await jobs.get(made[key]), 200)).toEqual(made);
    expectError(await jobs.get('job_nope'), 404, 'not_found');
  });

  it('resets every nullable field to its default with null', async () => {
    const withAgent = await startTestApp({ localAgent: { command: 'true', timeoutSeconds: 60 } });
    try {
      const { jobs: agentJobs } = await newTenant(undefined, withAgent);
      const made = await created(agentJobs.create(job({ executionTargetId: 'local', runNameTemplate: 'Run for {{ data.issue }}', model: 'large', effort: 'high' })));
      expect(made).toMatchObject({ executionTargetId: 'local', runNameTemplate: 'Run for {{ data.issue }}', model: 'large', effort: 'high' });
      const reset = expectStatus(await agentJobs.update(made.id, { executionTargetId: null, runNameTemplate: null, model: null, effort: null }), 200);
      expect(reset).toMatchObject({ executionTargetId: null, runNameTemplate: null, model: null, effort: null, name: made.name });
      expect(expectStatus(await agentJobs.get(made.id), 200)).toMatchObject({ executionTargetId: null, runNameTemplate: null, model: null, effort: null });
    } finally {
      await withAgent.close();
    }
  });

  it.each(['id', 'slug'] as const)('updates by %s only the fields sent, and `triggers` replaces the list', async (key) => {
    const made = await created(
      jobs.create(job({ slug: `patch-by-${key}`, model: 'large', triggers: [{ id: `trg_keep_${key}`, type: 'invocation' }, { type: 'schedule', cron: '0 3 * * *' }] })),
    );
    const renamed = expectStatus(await jobs.update(made[key], { name: 'Renamed', concurrencyLimit: 4 }), 200);
    expect(renamed).toEqual({ ...made, name: 'Renamed', concurrencyLimit: 4, updatedAt: expect.any(String) });

    const retriggered = expectStatus(await jobs.update(made[key], { triggers: [{ id: `trg_keep_${key}`, type: 'invocation', enabled: false }, { type: 'invocation' }] }), 200);
    expect(retriggered).toEqual({
      ...renamed,
      triggers: [
        { id: `trg_keep_${key}`, enabled: false, type: 'invocation' },
        { id: expect.stringMatching(/^trg_/), enabled: true, type: 'invocation' },
      ],
      updatedAt: expect.any(String),
    });
    expect(expectStatus(await jobs.get(made.id), 200)).toEqual(retriggered);
    expect(await app.database.db.trigger.count({ where: { jobId: made.id } })).toBe(2);
  });

  it.each(['id', 'slug'] as const)('disables and enables by %s, idempotently: a repeat changes nothing, not even updatedAt', async (key) => {
    const made = await created(jobs.create(job({ slug: `toggle-by-${key}` })));
    const disabled = expectStatus(await jobs.disable(made[key]), 200);
    expect(disabled).toEqual({ ...made, enabled: false, updatedAt: expect.any(String) });
    expect(expectStatus(await jobs.disable(made[key]), 200)).toEqual(disabled);

    const enabled = expectStatus(await jobs.enable(made[key]), 200);
    expect(enabled).toEqual({ ...made, enabled: true, updatedAt: expect.any(String) });
    const row = await jobRow(made.id);
    expect(expectStatus(await jobs.enable(made[key]), 200)).toEqual(enabled);
    expect(await jobRow(made.id)).toEqual(row);
  });

  it.each(['id', 'slug'] as const)('deletes by %s with 204; the job is gone for every operation and a second delete is 404', async (key) => {
    const made = await created(jobs.create(job({ slug: `delete-by-${key}`, triggers: [{ type: 'invocation' }] })));
    const res = await jobs.remove(made[key]);
    expectStatus(res, 204);
    expect(res.text).toBe('');
    const attempts = [() => jobs.get(made.id), () => jobs.get(made.slug), () => jobs.remove(made[key]), () => jobs.update(made[key], { name: 'x' }), () => jobs.enable(made[key]), () => jobs.disable(made[key])];
    for (const attempt of attempts) expectError(await attempt(), 404, 'not_found');
    expect((await jobs.list()).body.map((listed: { id: string }) => listed.id)).not.toContain(made.id);
    expect(await app.database.db.trigger.count({ where: { jobId: made.id } })).toBe(0);
  });
});

describe('list', () => {
  let jobs: JobsApi;
  let newestFirst: string[];
  beforeAll(async () => {
    ({ jobs } = await newTenant());
    const ids: string[] = [];
    for (let i = 1; i <= 5; i++) ids.push((await created(jobs.create(job({ name: `Job ${i}` })))).id);
    newestFirst = ids.reverse();
    for (const id of [newestFirst[1], newestFirst[3]]) expectStatus(await jobs.disable(id), 200);
  });

  const idsOf = (res: Response): string[] => expectStatus(res, 200).map((listed: { id: string }) => listed.id);

  /** Every page from `first`, following the `Link` headers as given. */
  async function pages(first: string): Promise<string[][]> {
    const seen: string[][] = [];
    for (let url: string | null = first; url !== null && seen.length < 10; ) {
      const res = await jobs.fetch(url);
      seen.push(idsOf(res));
      url = nextLink(res);
    }
    return seen;
  }

  it('lists the jobs newest first, in one page with no Link when they fit', async () => {
    const res = await jobs.list();
    expect(idsOf(res)).toEqual(newestFirst);
    expect(res.headers.link).toBeUndefined();
  });

  it('filters by enabled', async () => {
    expect(idsOf(await jobs.list('?enabled=true'))).toEqual([newestFirst[0], newestFirst[2], newestFirst[4]]);
    expect(idsOf(await jobs.list('?enabled=false'))).toEqual([newestFirst[1], newestFirst[3]]);
  });

  it('pages with limit and the Link headers, with no repeats and no gaps', async () => {
    expect(await pages(`${JOBS}?limit=2`)).toEqual([newestFirst.slice(0, 2), newestFirst.slice(2, 4), newestFirst.slice(4)]);
    expect(await pages(`${JOBS}?enabled=true&limit=2`)).toEqual([[newestFirst[0], newestFirst[2]], [newestFirst[4]]]);
  });

  it('refuses a cursor of another filter, and a malformed one, with 400 invalid_cursor', async () => {
    const link = nextLink(await jobs.list('?enabled=true&limit=2'))!;
    const cursor = new URL(link, BASE_URL).searchParams.get('cursor')!;
    expectError(await jobs.list(`?enabled=false&limit=2&cursor=${cursor}`), 400, 'invalid_cursor');
    expectError(await jobs.list(`?limit=2&cursor=${cursor}`), 400, 'invalid_cursor');
    expectError(await jobs.list('?cursor=not-a-cursor'), 400, 'invalid_cursor');
  });
});

describe('templates', () => {
  let jobs: JobsApi;
  beforeAll(async () => ({ jobs } = await newTenant()));

  it.each(['promptTemplate', 'runNameTemplate'])('refuses a %s that does not parse with 400 invalid_template and its position, on create and update', async (field) => {
    const broken = { [field]: 'Hello {{ name' };
    const message = `Invalid template: \`${field}\`, line 1, column 7: output "{{ name" not closed.`;
    await expectRefusedAndNothingSaved(() => jobs.create(job(broken)), 400, 'invalid_template', message);

    const made = await created(jobs.create(job()));
    const before = await jobRow(made.id);
    expectError(await jobs.update(made.id, broken), 400, 'invalid_template', message);
    expect(await jobRow(made.id)).toEqual(before);
  });

  it.each([
    ['promptTemplate', 'Fix it.\n{% include "steps" %}', 'line 2, column 1: `include`'],
    ['promptTemplate', '{% if data.x %}{% render "x" %}{% endif %}', 'line 1, column 16: `render`'],
    ['runNameTemplate', '{% layout "base" %}Run', 'line 1, column 1: `layout`'],
  ])('refuses a %s naming a partial (%j) with 400 invalid_template and its position, on create and update', async (field, source, where) => {
    const message = `Invalid template: \`${field}\`, ${where} is not available: templates have no partials to include.`;
    await expectRefusedAndNothingSaved(() => jobs.create(job({ [field]: source })), 400, 'invalid_template', message);
    const made = await created(jobs.create(job()));
    expectError(await jobs.update(made.id, { [field]: source }), 400, 'invalid_template', message);
  });
});

describe('conditions', () => {
  let jobs: JobsApi;
  let sourceId: string;
  beforeAll(async () => {
    const tenant = await newTenant();
    jobs = tenant.jobs;
    sourceId = await webhookSource(tenant.owner, 'src_conditions');
  });
  const webhook = (conditions: Body) => job({ triggers: [{ id: 'trg_cond', type: 'webhook', sourceId, events: ['issues.*'], conditions }] });

  it('saves conditions that compile', async () => {
    const conditions = { all: [{ path: 'payload.issue.labels[*].name', op: 'eq', value: 'agent' }], if: 'payload.issue.number > 1' };
    expect((await created(jobs.create(webhook(conditions)))).triggers[0].conditions).toEqual(conditions);
  });

  it.each([
    ['a bad path', { all: [{ path: 'payload..x', op: 'eq', value: 1 }] }, 'all[0]: bad path "payload..x"'],
    ['an operand the operator cannot take', { any: [{ path: 'event', op: 'in', value: 'issues' }] }, 'any[0]: `in` needs an array value'],
    ['a refused regular expression', { none: [{ path: 'event', op: 'matches', value: '(a)\\1' }] }, 'none[0]: the regular expression is refused'],
    ['a CEL parse error', { if: 'payload.issue.number ==' }, 'if: CEL parse error'],
  ])('refuses %s with 400 invalid_conditions naming the trigger and the part, on create and update', async (_label, conditions, part) => {
    const message = `Invalid conditions: \`triggers[0].conditions\`, ${part}`;
    await expectRefusedAndNothingSaved(() => jobs.create(webhook(conditions)), 400, 'invalid_conditions', message);
    const made = await created(jobs.create(job()));
    const before = await jobRow(made.id);
    expectError(await jobs.update(made.id, { triggers: webhook(conditions).triggers as Body[] }), 400, 'invalid_conditions', message);
    expect(await jobRow(made.id)).toEqual(before);
  });

  // The contract's `Cond` schema enumerates the operators, so request validation refuses an unknown one first.
  it('refuses an unknown operator with 400 validation_failed naming it', async () => {
    const unknownOp = webhook({ all: [{ path: 'event', op: 'like', value: 'x' }] });
    await expectRefusedAndNothingSaved(() => jobs.create(unknownOp), 400, 'validation_failed', '`triggers[0].conditions.all[0].op`');
  });
});

describe('what templates and conditions may read', () => {
  let jobs: JobsApi;
  let sourceId: string;
  beforeAll(async () => {
    const tenant = await newTenant();
    jobs = tenant.jobs;
    sourceId = await webhookSource(tenant.owner, 'src_roots');
  });
  const labeled = (conditions: Body) => ({ type: 'webhook', id: 'trg_labeled', sourceId, events: ['issues.labeled'], conditions });

  it('refuses the new user\'s three mistakes in one answer, with the suggestion, and saves the corrected job', async () => {
    const mistaken = job({
      promptTemplate: 'Fix {{ webhook.payload.issue.title }}',
      triggers: [labeled({ all: [{ path: 'paylod.label.name', op: 'eq', value: 'bug' }], if: "webhook.payload.label.name == 'bug'" })],
    });
    await expectRefusedAndNothingSaved(
      () => jobs.create(mistaken),
      400,
      'invalid_template',
      'The job has 3 problems',
      '(1) `promptTemplate`, line 1, column 8: `webhook` is not in the context',
      '(2) `triggers[0].conditions.all[0].path`: `paylod`',
      '(did you mean `payload`?)',
      '(3) `triggers[0].conditions.if`, column 1: `webhook` is not declared',
    );
    const corrected = job({
      promptTemplate: 'Fix {{ payload.issue.title }}',
      triggers: [labeled({ all: [{ path: 'payload.label.name', op: 'eq', value: 'bug' }], if: "payload.label.name == 'bug'" })],
    });
    await created(jobs.create(corrected));
  });

  it('saves real payload fields outside the autocomplete list', async () => {
    const body = job({
      promptTemplate: '{{ payload.issue.state }} {{ payload.repository.visibility }} {{ headers["x-github-event"] }} {{ delivery.id }}',
      triggers: [labeled({ any: [{ path: 'payload.issue.state', op: 'eq', value: 'open' }], if: "payload.repository.visibility == 'public'" })],
    });
    await created(jobs.create(body));
  });

  it('checks an update\'s template against the saved triggers, and the saved templates against new triggers', async () => {
    const made = await created(jobs.create(job({ promptTemplate: '{{ payload.issue.title }}', triggers: [labeled({})] })));
    expectError(await jobs.update(made.id, { runNameTemplate: 'Run {{ data.n }}' }), 400, 'invalid_template', '`runNameTemplate`', '`data` is not in the context');
    expectError(await jobs.update(made.id, { triggers: [{ type: 'invocation' }] }), 400, 'invalid_template', '`promptTemplate`', '`payload` is not in the context', 'invocation trigger');
    expectStatus(await jobs.update(made.id, { triggers: [labeled({}), { type: 'invocation' }], runNameTemplate: 'Run {% if data %}{{ data.n }}{% endif %}' }), 200);
  });
});

describe('references', () => {
  let jobs: JobsApi;
  let owner: TestOwner;
  beforeAll(async () => ({ jobs, owner } = await newTenant()));

  it('refuses a webhook trigger whose source is unknown or another tenant\'s with 400 validation_failed', async () => {
    const other = await newTenant();
    const foreign = await webhookSource(other.owner, 'src_foreign');
    for (const sourceId of ['src_nope', foreign]) {
      const body = job({ triggers: [{ type: 'webhook', sourceId, events: ['issues.opened'] }] });
      await expectRefusedAndNothingSaved(() => jobs.create(body), 400, 'validation_failed', '`triggers[0].sourceId`');
    }
    const own = await webhookSource(owner, 'src_own');
    await created(jobs.create(job({ triggers: [{ type: 'webhook', sourceId: own, events: ['issues.opened'] }] })));
  });

  it('stores a run trigger naming a job by slug with that job\'s id, and refuses an unknown or foreign job', async () => {
    const watched = await created(jobs.create(job({ slug: 'watched' })));
    const chained = await created(jobs.create(job({ triggers: [{ type: 'run', jobId: 'watched', states: ['succeeded'] }] })));
    expect(chained.triggers[0]).toEqual({ id: expect.stringMatching(/^trg_/), enabled: true, type: 'run', jobId: watched.id, states: ['succeeded'] });
    expect((await app.database.db.trigger.findFirstOrThrow({ where: { jobId: chained.id, id: chained.triggers[0].id } })).watchedJobId).toBe(watched.id);

    const foreign = await created((await newTenant()).jobs.create(job({ slug: 'foreign-watched' })));
    for (const jobId of ['no-such-job', foreign.id, foreign.slug]) {
      await expectRefusedAndNothingSaved(() => jobs.create(job({ triggers: [{ type: 'run', jobId, states: ['failed'] }] })), 400, 'validation_failed', '`triggers[0].jobId`');
    }
  });

  it('refuses the `local` target without a local agent, saying what the operator must set, and an unknown target, with 400 validation_failed', async () => {
    const local = '`executionTargetId` "local" is not available: this server has no local agent (the operator must set FLOWS_LOCAL_AGENT_COMMAND and restart the server to offer the `local` target).';
    await expectRefusedAndNothingSaved(() => jobs.create(job({ executionTargetId: 'local' })), 400, 'validation_failed', local);
    await expectRefusedAndNothingSaved(() => jobs.create(job({ executionTargetId: 'tgt_nope' })), 400, 'validation_failed', '`executionTargetId` "tgt_nope" is not an execution target of this tenant.');
    const made = await created(jobs.create(job()));
    expectError(await jobs.update(made.id, { executionTargetId: 'local' }), 400, 'validation_failed', local);
  });

  it('accepts the `local` target when the operator set a local agent', async () => {
    const withAgent = await startTestApp({ localAgent: { command: 'true', timeoutSeconds: 60 } });
    try {
      const { jobs: agentJobs } = await newTenant(undefined, withAgent);
      expect((await created(agentJobs.create(job({ executionTargetId: 'local' })))).executionTargetId).toBe('local');
    } finally {
      await withAgent.close();
    }
  });

  it.each([
    ['a cron of six fields', { type: 'schedule', cron: '1 2 3 4 5 6' }, '`triggers[0].cron`'],
    ['an unknown time zone', { type: 'schedule', cron: '0 3 * * *', timezone: 'Mars/Base' }, '`triggers[0].timezone`'],
  ])('refuses %s with 400 validation_failed naming it', async (_label, trigger, field) => {
    await expectRefusedAndNothingSaved(() => jobs.create(job({ triggers: [trigger] })), 400, 'validation_failed', field);
  });

  it('accepts a schedule with a time zone and an invocation trigger with an input schema', async () => {
    const triggers = [
      { type: 'schedule', cron: '0 3 * * 1-5', timezone: 'Europe/Berlin', data: { task: 'update' } },
      { type: 'invocation', inputSchema: { type: 'object', required: ['issue'] }, defaultData: { issue: 1 } },
    ];
    const made = await created(jobs.create(job({ triggers })));
    expect(made.triggers).toEqual(triggers.map((trigger) => ({ ...trigger, id: expect.stringMatching(/^trg_/), enabled: true })));
  });
});

describe('limits (interface specification, section 8)', () => {
  let jobs: JobsApi;
  beforeAll(async () => ({ jobs } = await newTenant()));

  it.each([
    ['a name of 120 characters', { name: str(120) }],
    ['a promptTemplate of 50000 characters', { promptTemplate: str(50_000) }],
    ['a runNameTemplate of 500 characters', { runNameTemplate: str(500) }],
    ['concurrencyLimit 1', { concurrencyLimit: 1 }],
    ['concurrencyLimit 50', { concurrencyLimit: 50 }],
    ['a model of 120 characters', { model: str(120) }],
    ['an effort of 40 characters', { effort: str(40) }],
    ['50 triggers', { triggers: times(50, { type: 'invocation' }) }],
    ['a slug of 30 characters', { slug: str(30, 'a') }],
  ])('creates a job with %s', async (_label, extra: Body) => {
    const made = await created(jobs.create(job(extra)));
    if (extra.triggers) expect(made.triggers).toHaveLength(50);
    else expect(made).toMatchObject(extra);
  });

  it.each([
    ['a name of 121 characters', { name: str(121) }],
    ['a promptTemplate of 50001 characters', { promptTemplate: str(50_001) }],
    ['a runNameTemplate of 501 characters', { runNameTemplate: str(501) }],
    ['concurrencyLimit 0', { concurrencyLimit: 0 }],
    ['concurrencyLimit 51', { concurrencyLimit: 51 }],
    ['a model of 121 characters', { model: str(121) }],
    ['an effort of 41 characters', { effort: str(41) }],
    ['51 triggers', { triggers: times(51, { type: 'invocation' }) }],
    ['a slug of 31 characters', { slug: str(31, 'a') }],
  ])('refuses %s with 400 validation_failed', async (_label, extra: Body) => {
    await expectRefusedAndNothingSaved(() => jobs.create(job(extra)), 400, 'validation_failed');
  });
});

describe('body size', () => {
  let jobs: JobsApi;
  beforeAll(async () => ({ jobs } = await newTenant()));
  // BODY_LIMIT is 1 MiB; a prompt of that many characters makes the body just longer.
  const oversized = job({ promptTemplate: str(1024 * 1024) });

  it('refuses a body over the limit on createJob with 400 payload_too_large, as the interface specification lists no 413', async () => {
    expect(BODY_LIMIT).toBe('1mb');
    await expectRefusedAndNothingSaved(() => jobs.create(oversized), 400, 'payload_too_large');
  });

  it('refuses a body over the limit on updateJob with 413 payload_too_large', async () => {
    const made = await created(jobs.create(job()));
    expectError(await jobs.update(made.id, oversized), 413, 'payload_too_large');
    expect((await jobRow(made.id))!.promptTemplate).toBe(made.promptTemplate);
  });
});

describe('scopes and the owner session', () => {
  it('lets flows:read list and get but not change jobs (403 insufficient_scope)', async () => {
    const { owner, jobs: writer } = await newTenant(['flows:write']);
    const made = await created(writer.create(job()));
    const reader = jobsApi({ authorization: `Bearer ${await accessToken(app, owner, { scopes: ['flows:read'] })}` });
    const { warnings, ...listed } = made;
    expect(warnings).toHaveLength(1);
    expect(expectStatus(await reader.list(), 200)).toEqual([listed]);
    expect(expectStatus(await reader.get(made.slug), 200)).toEqual(made);
    const attempts = [() => reader.create(job()), () => reader.update(made.id, { name: 'x' }), () => reader.remove(made.id), () => reader.enable(made.id), () => reader.disable(made.id)];
    for (const attempt of attempts) expectError(await attempt(), 403, 'insufficient_scope');
    expect(await jobRow(made.id)).toMatchObject({ name: made.name, enabled: true, deletedAt: null });
  });

  it('lets the owner session create and read jobs from the service\'s own origin, and refuses a change without it', async () => {
    const cookie = await sessionCookie(app, await createOwner(app.database.db));
    const made = await created(jobsApi({ cookie, origin: BASE_URL }).create(job()));
    expect(expectStatus(await jobsApi({ cookie }).get(made.id), 200)).toEqual(made);
    await expectRefusedAndNothingSaved(() => jobsApi({ cookie }).create(job()), 403, 'cross_site_request');
  });
});

describe('tenants', () => {
  it('answers 404 not_found to another tenant for every operation on a job, by id and by slug, and changes nothing', async () => {
    const a = await newTenant();
    const b = await newTenant();
    const enabled = await created(a.jobs.create(job({ slug: 'tenant-a-on', triggers: [{ type: 'invocation' }] })));
    const disabled = await created(a.jobs.create(job({ slug: 'tenant-a-off' })));
    expectStatus(await a.jobs.disable(disabled.id), 200);
    const rows = async () => [await jobRow(enabled.id), await jobRow(disabled.id)];
    const before = await rows();

    for (const ref of [enabled.id, enabled.slug, disabled.id, disabled.slug]) {
      const attempts = [() => b.jobs.get(ref), () => b.jobs.update(ref, { name: 'Taken over' }), () => b.jobs.enable(ref), () => b.jobs.disable(ref), () => b.jobs.remove(ref)];
      for (const attempt of attempts) expectError(await attempt(), 404, 'not_found');
    }
    expect(await rows()).toEqual(before);
  });

  it('lists only the caller\'s tenant\'s jobs', async () => {
    const a = await newTenant();
    const b = await newTenant();
    await created(a.jobs.create(job()));
    const own = await created(b.jobs.create(job()));
    const { warnings: _, ...listed } = own;
    expect(expectStatus(await b.jobs.list(), 200)).toEqual([listed]);
  });
});
