// The console's job and run pages, served to the owner's session: what each shows (escaped), the redirect to
// sign in without a session, and 404 for another tenant's ids.
import request from 'supertest';
import { agentCommand } from '../support/agent';
import { startTestApp, type TestApp } from '../support/app';
import { accessToken, createOwner, sessionCookie, type TestOwner } from '../support/identity';
import { createJob, githubDelivery, runSettled } from '../support/kit';
import { call } from '../support/http';
import { startEventReceiver } from '../support/tenant-fixtures';
import { until } from '../support/until';

let app: TestApp;
let owner: TestOwner;
let cookie: string;
let bearer: Record<string, string>;
let job: { id: string; slug: string };
let runId: string;

beforeAll(async () => {
  app = await startTestApp({ localAgent: { command: agentCommand(), timeoutSeconds: 60, sandbox: 'off' } });
  owner = await createOwner(app.database.db, { tenantName: 'Acme' });
  cookie = await sessionCookie(app, owner);
  bearer = { authorization: `Bearer ${await accessToken(app, owner)}` };
  job = await createJob(app, bearer, { name: 'Triage <script>alert(1)</script>', promptTemplate: 'Say {{ data.word }}', executionTargetId: 'local', triggers: [{ type: 'invocation' }, { type: 'schedule', cron: '0 3 * * *' }] });
  runId = (await call(app, 'POST', `/api/v1/jobs/${job.id}/invocations`, { headers: bearer, body: { data: { word: 'hello' } } })).body.runId;
  await runSettled(app, bearer, runId);
});
afterAll(() => app.close());

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
const get = (path: string, as = cookie) => request(app.app).get(path).set('cookie', as);

it.each(['/console/jobs', '/console/runs', '/console/jobs/job_x', '/console/runs/run_x'])('sends a visitor without a session from %s to sign in', async (path) => {
  const res = await request(app.app).get(path);
  expect([res.status, res.headers.location]).toEqual([303, `/login?next=${encodeURIComponent(path)}`]);
});

it('lists the jobs, names escaped, with their triggers, in the console frame', async () => {
  const res = await get('/console/jobs');
  expect(res.status).toBe(200);
  expect(res.text).toContain('Triage &lt;script&gt;alert(1)&lt;/script&gt;');
  expect(res.text).not.toContain('<script>alert(1)');
  expect(res.text).toContain(`href="/console/jobs/${job.id}"`);
  expect(res.text).toContain('invocation, schedule');
  expect(res.text).toContain(`<a href="/console/runs/${runId}">succeeded</a>, <time`); // its last run
  expect(res.text).toMatch(/<a href="\/console\/jobs" aria-current="page">Jobs<\/a>/);
  expect(res.text).toContain('Acme');
});

it('shows a job with its settings, template, triggers and recent runs, by id or slug', async () => {
  for (const ref of [job.id, job.slug]) {
    const res = await get(`/console/jobs/${ref}`);
    expect(res.status).toBe(200);
    expect(res.text).toContain('Say {{ data.word }}');
    expect(res.text).toContain('0 3 * * * (UTC)');
    expect(res.text).toContain(`href="/console/runs/${runId}"`);
  }
});

it('lists runs, filtered by job and state', async () => {
  expect((await get(`/console/runs?jobId=${job.slug}`)).text).toContain(`/console/runs/${runId}`);
  expect((await get(`/console/runs?jobId=${job.id}&state=succeeded`)).text).toContain(`/console/runs/${runId}`);
  const none = await get(`/console/runs?jobId=${job.id}&state=failed`);
  expect([none.status, none.text.includes(runId)]).toEqual([200, false]);
});

it('shows a run with its state, prompt, outcome and trace', async () => {
  const res = await get(`/console/runs/${runId}`);
  expect(res.status).toBe(200);
  expect(res.text).toContain('<strong id="run-state">succeeded</strong>');
  expect(res.text).not.toContain('live-run.js'); // a finished run's page is still
  expect(res.text).toContain('Say hello');
  expect(res.text).toContain('prompt_rendered');
  expect(res.text).toContain('agent_output');
});

it('answers 404 for another tenant\'s job and run, and shows none of them', async () => {
  const other = await sessionCookie(app, await createOwner(app.database.db, { tenantName: 'Other' }));
  for (const path of [`/console/jobs/${job.id}`, `/console/jobs/${job.slug}`, `/console/runs/${runId}`]) {
    const res = await get(path, other);
    expect(res.status).toBe(404);
    expect(res.text).not.toContain('Triage');
  }
  const list = await get('/console/jobs', other);
  expect([list.status, list.text.includes('Triage'), list.text.includes('No job yet.')]).toEqual([200, false, true]);
  expect((await get('/console/runs', other)).text).not.toContain(runId);
});

it('writes every time one way, in UTC, in a <time> element, on the tokens page as on the others', async () => {
  const pages = ['/console', '/console/jobs', `/console/jobs/${job.id}`, '/console/runs', `/console/runs/${runId}`];
  for (const path of pages) {
    const { text } = await get(path);
    const times = [...text.matchAll(/<time datetime="([^"]+)" title="([^"]+)">([^<]*)<\/time>/g)];
    expect([path, times.length > 0]).toEqual([path, true]);
    for (const [, datetime, title, shown] of times) {
      expect([datetime, title]).toEqual([new Date(datetime).toISOString(), datetime]);
      expect(shown).toBe(`${datetime.slice(0, 10)} ${datetime.slice(11, 19)} UTC`);
    }
    // No time written another way: every date on the page is in one of those elements.
    expect([path, text.replace(/<time [^>]*>[^<]*<\/time>/g, '').match(/\b\d{4}-\d\d-\d\d[ T]\d\d:\d\d/g)]).toEqual([path, null]);
  }
  const tokens = (await get('/console')).text;
  expect(tokens).toMatch(/<td data-label="Approved"><time datetime="[^"]+" title="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/time><\/td>/);
  expect(tokens).toMatch(/<td data-label="Expires"><time /);
  expect(tokens).toMatch(/<td data-label=""><form method="post" action="\/console\/access-tokens\/[^"]+\/revoke">/);
  expect(await get('/console/local-time.js').then((res) => res.status)).not.toBe(200); // no script rewrites them in the browser
});

it('refuses a cursor from another list with the error page, not a 500', async () => {
  const res = await get('/console/jobs?cursor=not-a-cursor');
  expect(res.status).toBe(400);
});

describe('actions', () => {
  const post = (path: string, form: Record<string, string> = {}, origin = 'http://localhost:3000', as = cookie) =>
    request(app.app).post(path).set('cookie', as).set('origin', origin).type('form').send(form);

  it('invokes a job from its form and goes to the run; refused data stays on the form with the reason', async () => {
    const schema = await createJob(app, bearer, {
      name: 'Typed',
      promptTemplate: 'Say {{ data.word }}',
      executionTargetId: 'local',
      triggers: [{ type: 'invocation', inputSchema: { type: 'object', required: ['word'], properties: { word: { type: 'string' } } } }],
    });
    const started = await post(`/console/jobs/${schema.id}/invoke`, { data: '{"word": "hi"}' });
    expect(started.status).toBe(303);
    const newRun = /^\/console\/runs\/(run_\w+)$/.exec(started.headers.location)![1];
    expect((await runSettled(app, bearer, newRun)).prompt).toBe('Say hi');

    const notJson = await post(`/console/jobs/${schema.id}/invoke`, { data: '{"word": ' });
    expect(notJson.status).toBe(400);
    expect(notJson.text).toMatch(/<textarea id="data" name="data" rows="4" aria-invalid="true" aria-describedby="data-error">\{&quot;word&quot;: <\/textarea>/);
    expect(notJson.text).toContain('The data is not JSON');
    const refused = await post(`/console/jobs/${schema.id}/invoke`, { data: '{"word": 3}' });
    expect([refused.status, refused.text.includes('must be string')]).toEqual([400, true]);
  });

  it('offers the Invoke form only to a job that takes invocations, and says how another one starts', async () => {
    const source = (await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: 'Hooks', format: 'github' } })).body;
    const webhook = { type: 'webhook', sourceId: source.id, events: ['issues.labeled'] };
    const invokeForm = (id: string) => `<form method="post" action="/console/jobs/${id}/invoke">`;
    const cases: [string, Record<string, unknown>[], boolean, string | null][] = [
      ['an invocation trigger', [{ type: 'invocation' }, webhook], true, null],
      ['no trigger', [], true, null],
      ['a webhook trigger only', [webhook], false, 'It starts on a matching webhook delivery, as its triggers below say.'],
      ['a schedule and a disabled invocation trigger', [{ type: 'schedule', cron: '0 3 * * *' }, { type: 'invocation', enabled: false }], false, 'It starts on its schedule, as its triggers below say.'],
      ['only disabled triggers', [{ ...webhook, enabled: false }], false, 'Its triggers are all disabled: nothing starts it.'],
    ];
    for (const [label, triggers, offered, says] of cases) {
      const made = await createJob(app, bearer, { name: `With ${label}`, promptTemplate: triggers.some((t) => t.type === 'webhook') ? 'Fix {{ payload.issue.number }}' : 'x', triggers });
      const { text } = await get(`/console/jobs/${made.id}`);
      expect([label, text.includes(invokeForm(made.id)), text.includes('<h2>How it starts</h2>')]).toEqual([label, offered, !offered]);
      if (says) expect(text).toContain(`${says} To run it from here, <a href="/console/jobs/${made.id}/edit">${label.includes('disabled invocation') ? 'enable its invocation trigger' : 'add an invocation trigger'}</a>.`);
    }
  });

  it('creates a job from pasted JSON, checked as the API checks it, a refusal beside the field with the text kept', async () => {
    const form = await get('/console/jobs/new-json');
    expect(form.status).toBe(200);
    expect(form.text).toContain('&quot;promptTemplate&quot;: &quot;Say hello to {{ data.who }}.&quot;');
    const made = await post('/console/jobs', { job: JSON.stringify({ name: 'From the console', promptTemplate: 'Hi {{ data.who }}' }) });
    expect(made.status).toBe(303);
    const id = /^\/console\/jobs\/(job_\w+)$/.exec(made.headers.location)![1];
    expect((await call(app, 'GET', `/api/v1/jobs/${id}`, { headers: bearer })).body.name).toBe('From the console');

    for (const [text, reason] of [
      ['{"name": ', 'The job is not JSON'],
      ['{"name": "x", "nme": "x", "promptTemplate": "x"}', '`nme` is not an allowed property'],
      ['{"name": "x", "promptTemplate": "{{ dta.who }}"}', '(did you mean `data`?)'],
    ]) {
      const refused = await post('/console/jobs', { job: text });
      expect(refused.status).toBe(400);
      expect(refused.text).toContain(escape(reason));
      expect(refused.text).toContain(`aria-describedby="job-error">${escape(text)}</textarea>`);
    }
  });

  it('creates a job from the form, field by field, a refusal shown beside the field it concerns with the values kept', async () => {
    const form = await get('/console/jobs/new');
    expect(form.status).toBe(200);
    expect(form.text).toContain('<label for="field-promptTemplate">Prompt template</label>');
    expect(form.text).toContain('<option value="local">Local agent</option>');
    const made = await post('/console/jobs', { name: 'Nightly', promptTemplate: 'Tidy up at {{ schedule.slot }}', executionTargetId: 'local', trigger: 'schedule', sourceId: '', events: '', cron: '0 3 * * *', timezone: 'Europe/Berlin' });
    expect(made.status).toBe(303);
    const id = /^\/console\/jobs\/(job_\w+)$/.exec(made.headers.location)![1];
    expect((await call(app, 'GET', `/api/v1/jobs/${id}`, { headers: bearer })).body).toMatchObject({ name: 'Nightly', executionTargetId: 'local', triggers: [{ type: 'schedule', cron: '0 3 * * *', timezone: 'Europe/Berlin' }] });

    const cases: [Record<string, string>, string, string][] = [
      [{ name: '', promptTemplate: 'x', trigger: 'invocation' }, 'name', '`name`'],
      [{ name: 'Typo', promptTemplate: 'Hi {{ dta.who }}', trigger: 'invocation' }, 'promptTemplate', '(did you mean `data`?)'],
      [{ name: 'Bad cron', promptTemplate: 'x', trigger: 'schedule', cron: 'every day' }, 'cron', '`triggers[0].cron`'],
      [{ name: 'No source', promptTemplate: 'x', trigger: 'webhook', sourceId: '', events: 'issues.labeled' }, 'sourceId', 'sourceId'],
    ];
    for (const [sent, fieldName, reason] of cases) {
      const refused = await post('/console/jobs', sent);
      expect(refused.status).toBe(400);
      expect(refused.text).toMatch(new RegExp(`aria-describedby="[^"]*field-${fieldName}-error" aria-invalid="true"`));
      expect(refused.text).toMatch(new RegExp(`<p id="field-${fieldName}-error" class="error" role="alert">[^<]*${escape(reason).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      expect(refused.text).toContain(escape(sent.promptTemplate));
    }
  });

  it('names a trigger in a refusal by its place in the job, never by an id it was given but not saved with', async () => {
    const source = (await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: 'Refusals', format: 'github' } })).body;
    const fromForm = await post('/console/jobs', { name: 'Wrong root', promptTemplate: 'Hi {{ data.who }}', trigger: 'webhook', sourceId: source.id, events: 'issues.labeled' });
    expect(fromForm.status).toBe(400);
    expect(fromForm.text).toMatch(/<p id="field-promptTemplate-error" class="error" role="alert">[^<]*\(from its webhook trigger `triggers\[0\]`\)/);
    const draft = { name: 'Wrong path', promptTemplate: 'x', triggers: [{ type: 'webhook', sourceId: source.id, events: ['issues.labeled'], conditions: { all: [{ path: 'data.x', op: 'eq', value: 1 }] } }] };
    const fromJson = await post('/console/jobs', { job: JSON.stringify(draft) });
    expect(fromJson.status).toBe(400);
    expect(fromJson.text).toContain(escape("Invalid conditions: `triggers[0].conditions.all[0].path`: `data` is not in a webhook trigger's context"));
    for (const refused of [fromForm, fromJson]) expect(refused.text).not.toMatch(/trg_\w+/);
  });

  it('edits a job from its settings as JSON, checked as the API checks an update, a refusal kept on the form', async () => {
    const edited = await createJob(app, bearer, { name: 'Editable', promptTemplate: 'Say {{ data.word }}', executionTargetId: 'local', triggers: [{ type: 'invocation' }] });
    const form = await get(`/console/jobs/${edited.id}/edit`);
    expect(form.status).toBe(200);
    const text = /<textarea id="job" name="job" rows="22">([^<]*)<\/textarea>/.exec(form.text)![1].replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
    const settings = JSON.parse(text);
    expect(settings).toMatchObject({ name: 'Editable', promptTemplate: 'Say {{ data.word }}', triggers: [{ type: 'invocation' }] });
    // The form's text is what the update takes, unchanged or changed.
    const saved = await post(`/console/jobs/${edited.id}/edit`, { job: JSON.stringify({ ...settings, concurrencyLimit: 3, model: null }) });
    expect([saved.status, saved.headers.location]).toEqual([303, `/console/jobs/${edited.id}`]);
    expect((await call(app, 'GET', `/api/v1/jobs/${edited.id}`, { headers: bearer })).body).toMatchObject({ concurrencyLimit: 3, triggers: [{ id: settings.triggers[0].id }] });

    const refused = await post(`/console/jobs/${edited.id}/edit`, { job: '{"promptTemplate": "{{ dta.word }}"}' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain(escape('(did you mean `data`?)'));
    expect(refused.text).toContain(`aria-describedby="job-error">${escape('{"promptTemplate": "{{ dta.word }}"}')}</textarea>`);
    const other = await sessionCookie(app, await createOwner(app.database.db));
    expect((await get(`/console/jobs/${edited.id}/edit`, other)).status).toBe(404);
    expect((await post(`/console/jobs/${edited.id}/edit`, { job: '{"name": "Taken"}' }, 'http://localhost:3000', other)).status).toBe(404);
    expect((await call(app, 'GET', `/api/v1/jobs/${edited.id}`, { headers: bearer })).body.name).toBe('Editable');
  });

  it('refuses a post from another origin with 403', async () => {
    for (const path of ['/console/jobs', `/console/jobs/${job.id}/edit`, `/console/jobs/${job.id}/invoke`, `/console/jobs/${job.id}/disable`, `/console/runs/${runId}/replay`]) {
      expect((await post(path, {}, 'https://evil.example')).status).toBe(403);
    }
    expect((await call(app, 'GET', `/api/v1/jobs/${job.id}`, { headers: bearer })).body.enabled).toBe(true);
  });

  it('disables and enables a job', async () => {
    expect((await post(`/console/jobs/${job.id}/disable`)).status).toBe(303);
    expect((await get(`/console/jobs/${job.id}`)).text).toContain('<button type="submit" class="secondary">Enable</button>');
    expect((await post(`/console/jobs/${job.id}/enable`)).status).toBe(303);
    expect((await call(app, 'GET', `/api/v1/jobs/${job.id}`, { headers: bearer })).body.enabled).toBe(true);
  });

  it('deletes a job after asking, stopping its runs; another tenant cannot', async () => {
    const doomed = await createJob(app, bearer, { name: 'Doomed', promptTemplate: 'sleep', executionTargetId: 'local' });
    const running = (await call(app, 'POST', `/api/v1/jobs/${doomed.id}/invocations`, { headers: bearer, body: {} })).body.runId;
    await runSettled(app, bearer, running, ['running']);
    const ask = await get(`/console/jobs/${doomed.id}/delete`);
    expect(ask.status).toBe(200);
    expect(ask.text).toContain('<button type="submit">Delete Doomed</button>');
    const other = await sessionCookie(app, await createOwner(app.database.db));
    expect((await post(`/console/jobs/${doomed.id}/delete`, {}, 'http://localhost:3000', other)).status).toBe(404);
    const deleted = await post(`/console/jobs/${doomed.id}/delete`);
    expect([deleted.status, deleted.headers.location]).toEqual([303, '/console/jobs']);
    expect((await get(`/console/jobs/${doomed.id}`)).status).toBe(404);
    expect((await runSettled(app, bearer, running)).state).toBe('canceled');
  });

  it('stops a running run, and replays a finished one', async () => {
    const sleeper = await createJob(app, bearer, { name: 'Sleeper', promptTemplate: 'sleep', executionTargetId: 'local' });
    const long = (await call(app, 'POST', `/api/v1/jobs/${sleeper.id}/invocations`, { headers: bearer, body: {} })).body.runId;
    await runSettled(app, bearer, long, ['running']);
    const running = (await get(`/console/runs/${long}`)).text;
    expect(running).toContain('>Stop</button>');
    expect(running).toContain(`<tbody id="trace" data-run="${long}" data-after="`);
    expect(running).toContain('<script src="/console/live-run.js" defer></script>');
    const script = await get('/console/live-run.js');
    expect([script.status, script.headers['content-type']]).toEqual([200, 'text/javascript; charset=utf-8']);
    expect((await post(`/console/runs/${long}/stop`)).status).toBe(303);
    expect((await runSettled(app, bearer, long)).state).toBe('canceled');

    const replayed = await post(`/console/runs/${runId}/replay`);
    const again = /^\/console\/runs\/(run_\w+)$/.exec(replayed.headers.location)![1];
    expect((await runSettled(app, bearer, again)).replayOf).toBe(runId);
  });
});

describe('webhook activity', () => {
  let activityId: string;

  beforeAll(async () => {
    const source = (await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: 'GitHub', format: 'github' } })).body;
    const trigger = (label: string) => ({ type: 'webhook', sourceId: source.id, events: ['issues.labeled'], conditions: { all: [{ path: 'payload.label.name', op: 'eq', value: label }] } });
    await createJob(app, bearer, { name: 'Wants agent', promptTemplate: 'Fix {{ payload.issue.number }}', triggers: [trigger('agent')] });
    await createJob(app, bearer, { name: 'Wants docs', promptTemplate: 'x', triggers: [trigger('docs')] });
    const { body, headers } = githubDelivery(source.signingSecret, { action: 'labeled', issue: { number: 42 }, label: { name: 'agent' } });
    activityId = (await request(app.app).post(`/hooks/${source.id}`).set(headers).send(body)).body.activityId;
    await app.runner.idle();
  });

  it('lists the deliveries with what their triggers decided', async () => {
    const res = await get('/console/activity');
    expect(res.status).toBe(200);
    expect(res.text).toContain(`href="/console/activity/${activityId}">issues.labeled</a>`);
    expect(res.text).toContain('1 matched, 0 errors, 1 missed');
  });

  it('shows why each trigger ran or not, leaf by leaf, and the run it started', async () => {
    const res = await get(`/console/activity/${activityId}`);
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/Wants agent<\/a>, trigger <code>trg_\w+<\/code>: match/);
    expect(res.text).toMatch(/Wants docs<\/a>, trigger <code>trg_\w+<\/code>: no-match/);
    expect(res.text).toContain('<code>&quot;docs&quot;</code></td><td data-label="Found"><code>&quot;agent&quot;</code></td><td data-label="Result">does not hold</td>');
    expect(res.text).toMatch(/Started <a href="\/console\/runs\/run_\w+">/);
  });

  it('links a run to the delivery that started it', async () => {
    const started = /Started <a href="\/console\/runs\/(run_\w+)">/.exec((await get(`/console/activity/${activityId}`)).text)![1];
    const res = await get(`/console/runs/${started}`);
    expect(res.text).toContain(`the webhook delivery <a href="/console/activity/${activityId}">${activityId}</a>`);
    expect((await call(app, 'GET', `/api/v1/runs/${started}`, { headers: bearer })).body.trigger).toMatchObject({ type: 'webhook', activityId });
  });

  it('backtests a draft of a job\'s webhook triggers on the recorded deliveries, saving nothing', async () => {
    const docs = (await call(app, 'GET', '/api/v1/jobs', { headers: bearer })).body.find((j: { name: string }) => j.name === 'Wants docs');
    const page = await get(`/console/jobs/${docs.id}/backtest`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('&quot;value&quot;: &quot;docs&quot;');
    const post = (form: Record<string, string>) => request(app.app).post(`/console/jobs/${docs.id}/backtest`).set('cookie', cookie).set('origin', 'http://localhost:3000').type('form').send(form);
    const draft = docs.triggers.map((t: any) => ({ ...t, conditions: { all: [{ path: 'payload.label.name', op: 'eq', value: 'agent' }] } }));
    const matched = await post({ triggers: JSON.stringify(draft), days: '7' });
    expect(matched.status).toBe(200);
    expect(matched.text).toContain('1 of 1 recorded deliveries of the last 7 days would have matched.');
    expect(matched.text).toContain(`href="/console/activity/${activityId}"`);
    const unchanged = (await call(app, 'GET', `/api/v1/jobs/${docs.id}`, { headers: bearer })).body.triggers[0].conditions;
    expect(unchanged.all[0].value).toBe('docs');

    const notJson = await post({ triggers: '[{', days: '7' });
    expect([notJson.status, notJson.text.includes('The triggers are not JSON')]).toEqual([400, true]);
    const badRoot = await post({ triggers: JSON.stringify(docs.triggers.map((t: any) => ({ ...t, conditions: { all: [{ path: 'paylod.x', op: 'exists' }] } }))), days: '7' });
    expect([badRoot.status, badRoot.text.includes('(did you mean `payload`?)')]).toEqual([400, true]);
  });

  it('answers 404 for another tenant\'s delivery', async () => {
    const other = await sessionCookie(app, await createOwner(app.database.db));
    expect((await get(`/console/activity/${activityId}`, other)).status).toBe(404);
    expect((await get('/console/activity', other)).text).not.toContain(activityId);
  });
});

describe('webhook sources', () => {
  const post = (path: string, form: Record<string, string> = {}, as = cookie) =>
    request(app.app).post(path).set('cookie', as).set('origin', 'http://localhost:3000').type('form').send(form);

  it('creates a source and shows its secret once, rotates it, and deletes a source no trigger uses', async () => {
    const made = await post('/console/sources', { name: 'Widgets on GitHub', format: 'github' });
    expect([made.status, made.headers['cache-control']]).toEqual([200, 'no-store']);
    const secret = /id="signing-secret" readonly value="([^"]+)"/.exec(made.text)![1];
    expect(made.text).toContain('data-copy="signing-secret"');
    const listed = await get('/console/sources');
    expect(listed.text).toContain('Widgets on GitHub');
    expect(listed.text).not.toContain(secret);
    const id = /\/console\/sources\/(src_\w+)\/rotate/.exec(listed.text)![1];

    const rotated = await post(`/console/sources/${id}/rotate`);
    const fresh = /id="signing-secret" readonly value="([^"]+)"/.exec(rotated.text)![1];
    expect(fresh).not.toBe(secret);

    const other = await sessionCookie(app, await createOwner(app.database.db));
    expect((await post(`/console/sources/${id}/delete`, {}, other)).status).toBe(404);
    expect((await post(`/console/sources/${id}/delete`)).status).toBe(303);
    expect((await get('/console/sources')).text).not.toContain('Widgets on GitHub');
  });

  it('keeps a refused source on the form with the reason, and refuses to delete a source a trigger uses', async () => {
    const refused = await post('/console/sources', { name: 'Odd', format: 'carrier-pigeon' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('`format` must be equal to one of the allowed values');
    expect(refused.text).toContain('value="Odd" aria-invalid="true"');

    const source = (await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: 'Used', format: 'github' } })).body;
    await createJob(app, bearer, { name: 'Uses it', promptTemplate: 'x', triggers: [{ type: 'webhook', sourceId: source.id, events: ['push'] }] });
    const inUse = await post(`/console/sources/${source.id}/delete`);
    expect([inUse.status, inUse.text.includes('still use')]).toEqual([409, true]);
  });
});

describe('a webhook source\'s page', () => {
  it('shows the deliveries it refused, with what to check, the header names and the body size; to its tenant only', async () => {
    const source = (await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: 'Widgets <on> GitHub', format: 'github' } })).body;
    const { body, headers } = githubDelivery(source.signingSecret, { action: 'opened', issue: { number: 7 } });
    const { 'x-hub-signature-256': _, ...unsigned } = headers;
    expect((await request(app.app).post(`/hooks/${source.id}`).set(unsigned).send(body)).status).toBe(401);

    const listed = await get('/console/sources');
    expect(listed.text).toContain(`<a href="/console/sources/${source.id}">Widgets &lt;on&gt; GitHub</a>`);
    const page = await get(`/console/sources/${source.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1>Widgets &lt;on&gt; GitHub</h1>');
    expect(page.text).toContain('<code>signature_missing</code> (401)');
    expect(page.text).toContain('GitHub sent no X-Hub-Signature-256 header: set a secret on the GitHub webhook');
    expect(page.text).toContain('<code>x-github-event</code>, <code>x-github-delivery</code>');
    expect(page.text).toContain(`${Buffer.byteLength(body).toLocaleString('en')} bytes`);
    expect(page.text).not.toContain('"number":7');

    const other = await sessionCookie(app, await createOwner(app.database.db));
    const foreign = await get(`/console/sources/${source.id}`, other);
    expect(foreign.status).toBe(404);
    expect(foreign.text).not.toContain('signature_missing');
  });

  it('says so when nothing was refused', async () => {
    const source = (await call(app, 'POST', '/api/v1/webhook-sources', { headers: bearer, body: { name: 'Quiet', format: 'linear' } })).body;
    expect((await get(`/console/sources/${source.id}`)).text).toContain('No delivery refused lately.');
  });
});

describe('event subscriptions', () => {
  const post = (path: string, form: string) => request(app.app).post(path).set('cookie', cookie).set('origin', 'http://localhost:3000').type('form').send(form);

  it('creates a subscription with its secret shown once, lists its deliveries, redelivers one and deletes it', async () => {
    const receiver = await startEventReceiver();
    try {
      const made = await post('/console/subscriptions', `url=${encodeURIComponent(receiver.url)}&events=run.succeeded&events=run.failed`);
      expect([made.status, made.headers['cache-control']]).toEqual([200, 'no-store']);
      const secret = /id="signing-secret" readonly value="([^"]+)"/.exec(made.text)![1];
      const listed = await get('/console/subscriptions');
      expect(listed.text).toContain('run.succeeded, run.failed');
      expect(listed.text).not.toContain(secret);
      const id = /\/console\/subscriptions\/(sub_\w+)"/.exec(listed.text)![1];

      const ran = (await call(app, 'POST', `/api/v1/jobs/${job.id}/invocations`, { headers: bearer, body: { data: { word: 'events' } } })).body.runId;
      await runSettled(app, bearer, ran);
      const deliveries = await until('a delivery listed', async () => {
        const page = await get(`/console/subscriptions/${id}`);
        return page.text.includes('run.succeeded') && page.text;
      });
      const deliveryId = /\/deliveries\/(\w+)\/redeliver/.exec(deliveries)![1];
      expect((await post(`/console/subscriptions/${id}/deliveries/${deliveryId}/redeliver`, '')).status).toBe(303);

      const other = await sessionCookie(app, await createOwner(app.database.db));
      expect((await get(`/console/subscriptions/${id}`, other)).status).toBe(404);
      expect((await post(`/console/subscriptions/${id}/delete`, '')).status).toBe(303);
      expect((await get('/console/subscriptions')).text).not.toContain(id);
    } finally {
      await receiver.close();
    }
  });

  it('keeps a refused subscription on the form with the reason', async () => {
    const refused = await post('/console/subscriptions', 'url=not-a-url&events=run.failed');
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('id="subscription-error"');
    expect(refused.text).toMatch(/<input type="checkbox" name="events" value="run.failed" checked>/);
    const none = await post('/console/subscriptions', `url=${encodeURIComponent('https://hooks.example.test/x')}`);
    expect(none.status).toBe(400);
  });
});
