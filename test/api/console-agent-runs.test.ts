// The console and the coding agents: a run's trace as a timeline of what the agent said, ran, changed and
// spent (every text escaped), the rows the live script appends rendered as the page's own, the run's usage,
// and a job's agent on its page and in the new-job form.
import request from 'supertest';
import { startTestApp, type TestApp } from '../support/app';
import { call } from '../support/http';
import { accessToken, createOwner, sessionCookie, type TestOwner } from '../support/identity';
import { createJob } from '../support/kit';
import { AGENT_TRACE, insertTracedRun } from '../support/traced-runs';

let app: TestApp;
let owner: TestOwner;
let cookie: string;
let bearer: Record<string, string>;
let job: { id: string };
let runId: string;
let page: string;

const USAGE = { inputTokens: 1234567, outputTokens: 8910, cachedTokens: 1000000, turns: 1, costUsd: 12.5, costSource: 'computed' };

beforeAll(async () => {
  app = await startTestApp();
  owner = await createOwner(app.database.db, { tenantName: 'Acme' });
  cookie = await sessionCookie(app, owner);
  bearer = { authorization: `Bearer ${await accessToken(app, owner)}` };
  job = await createJob(app, bearer, { name: 'Fix bugs', promptTemplate: 'Fix it', agent: { kind: 'claude-code', maxTurns: 30, maxCostUsd: 2.5, permissionMode: 'read-only', allowedTools: ['Bash(git:*)', 'Read'] } });
  // A malformed event of a typed kind (no text) stays readable as its data.
  const events = [...AGENT_TRACE, { type: 'message', data: { words: 'no text field' } }];
  runId = await insertTracedRun(app.database.db, { tenantId: owner.tenantId, jobId: job.id, state: 'failed', events, usage: USAGE });
  const res = await get(`/console/runs/${runId}`);
  expect(res.status).toBe(200);
  page = res.text;
});
afterAll(() => app.close());

const get = (path: string, as = cookie) => request(app.app).get(path).set('cookie', as);
/** The Data cell of the trace row of `seq`. */
const dataCell = (html: string, seq: number) => new RegExp(`<tr><td data-label="#">${seq}</td>.*?<td data-label="Data">(.*?)</td></tr>`, 's').exec(html)?.[1];

describe('a run of a coding agent', () => {
  it('shows the session that started, in a line', () => {
    expect(dataCell(page, 1)).toBe('<div class="event"><p><strong>claude-code</strong> started, model <code>claude-sonnet-4-5</code>, session <code>sess-7f3a9c</code></p></div>');
  });

  it('says which run a session continued from, or why a new one began', async () => {
    const continued = { type: 'session_started', data: { agent: 'codex', sessionId: 't-1', continuedFromRunId: runId } };
    const cold = { type: 'session_started', data: { agent: 'gemini', sessionId: 's-2', model: 'g', notContinued: 'the state kept for run run_x\'s session is gone' } };
    const id = await insertTracedRun(app.database.db, { tenantId: owner.tenantId, jobId: job.id, state: 'succeeded', events: [continued, cold] });
    const shown = (await get(`/console/runs/${id}`)).text;
    expect(dataCell(shown, 1)).toBe(`<div class="event"><p><strong>codex</strong> started, its default model, session <code>t-1</code>, continued from run <a href="/console/runs/${runId}">${runId}</a></p></div>`);
    expect(dataCell(shown, 2)).toBe(
      '<div class="event"><p><strong>gemini</strong> started, model <code>g</code>, session <code>s-2</code>; a new session, as the earlier one could not continue: the state kept for run run_x&#39;s session is gone</p></div>',
    );
  });

  it('shows a message as paragraphs that keep their line breaks, its markup escaped', () => {
    expect(dataCell(page, 2)).toBe('<div class="event"><p>I will look at &lt;script&gt;alert(&quot;said&quot;)&lt;/script&gt; first.\nThen the tests.</p><p>A second paragraph.</p></div>');
  });

  it('shows a tool call by its name, its input folded; a failed result folded and marked', () => {
    expect(dataCell(page, 3)).toBe(
      '<div class="event"><details><summary><code>WebFetch</code> <span class="call-id">toolu_01</span></summary><pre>{\n  &quot;url&quot;: &quot;https://example.com/&lt;b&gt;&quot;\n}</pre></details></div>',
    );
    expect(dataCell(page, 4)).toBe(
      '<div class="event"><details><summary><strong class="error">Error</strong> of <span class="call-id">toolu_01</span> · 1 line</summary><pre>refused: &lt;img src=x onerror=alert(1)&gt;</pre></details></div>',
    );
  });

  it('shows a command as `$ command`, its exit code marked when not 0, its output folded and closed', () => {
    const failed = dataCell(page, 5)!;
    expect(failed).toMatch(/^<div class="event"><pre class="command">\$ echo &quot;&lt;b&gt;bold&lt;\/b&gt;&quot; &amp;&amp; npm test -- --testPathPattern=very-long/);
    expect(failed).toContain('</pre><details><summary><strong class="error">exit 1</strong> · 2 lines</summary><pre>FAIL test/a.test.ts\n&lt;i&gt;2 failed&lt;/i&gt;\n</pre></details></div>');
    expect(dataCell(page, 6)).toBe('<div class="event"><pre class="command">$ git status --short</pre><p>exit 0 · no output</p></div>');
    expect(page).not.toMatch(/<details[^>]* open/);
  });

  it('shows a file change as its kind and path', () => {
    expect(dataCell(page, 7)).toBe(`<div class="event"><p>update <code>src/${'deeply-nested-folder-with-a-long-name/'.repeat(5)}editor.ts</code></p></div>`);
  });

  it('shows usage in a line: tokens, turns and the cost with its source, or that the cost is unknown', () => {
    expect(dataCell(page, 8)).toBe('<div class="event"><p>48,210 tokens in, 3,120 out, 12,000 cached · 7 turns · $0.4213 (reported by the agent)</p></div>');
    expect(dataCell(page, 9)).toBe('<div class="event"><p>10 tokens in, 2 out, 0 cached · 1 turn · cost unknown</p></div>');
  });

  it('shows other events as before: a line of output as text, others and malformed ones as their data', () => {
    expect(dataCell(page, 10)).toBe('<pre>a line that is not an event &lt;u&gt;as text&lt;/u&gt;</pre>');
    // PostgreSQL keeps a JSON object's keys in an order of its own: the data is compared, not its text.
    const data = /^<pre>(\{.*\})<\/pre>$/.exec(dataCell(page, 11)!)![1].replace(/&quot;/g, '"');
    expect(JSON.parse(data)).toEqual({ message: 'Budget crossed', fatal: true, reason: 'budget_exceeded' });
    expect(dataCell(page, 12)).toBe('<pre>{&quot;words&quot;:&quot;no text field&quot;}</pre>');
  });

  it('lets no markup of the trace through', () => {
    for (const injected of ['<script>alert("said")', '<b>bold</b>', '<img src=x', '<i>2 failed', '<u>as text', 'example.com/<b>']) expect(page).not.toContain(injected);
  });

  it('shows the run\'s usage in its summary, and none for a run without', async () => {
    expect(page).toContain('<dt>Usage</dt><dd>1,234,567 tokens in, 8,910 out, 1,000,000 cached · 1 turn · $12.50 (computed from the operator’s prices)</dd>');
    const quiet = await insertTracedRun(app.database.db, { tenantId: owner.tenantId, jobId: job.id, state: 'succeeded', events: [] });
    expect((await get(`/console/runs/${quiet}`)).text).toContain('<dt>Finished</dt>');
    expect((await get(`/console/runs/${quiet}`)).text).not.toContain('<dt>Usage</dt>');
  });
});

describe('the rows the live script appends', () => {
  it('are the page\'s own rows after `after`, with the run\'s state', async () => {
    const live = await insertTracedRun(app.database.db, { tenantId: owner.tenantId, jobId: job.id, state: 'running', events: AGENT_TRACE, ownerId: app.sweeps.instanceId });
    const shown = (await get(`/console/runs/${live}`)).text;
    expect(shown).toContain(`<tbody id="trace" data-run="${live}" data-after="${AGENT_TRACE.length}">`);
    const rows = await get(`/console/runs/${live}/trace-rows?after=4`);
    expect([rows.status, rows.headers['content-type'], rows.headers['cache-control']]).toEqual([200, 'text/html; charset=utf-8', 'no-store']);
    expect(rows.text).toMatch(new RegExp(`^<table><tbody data-state="running" data-after="${AGENT_TRACE.length}" data-ended="false" data-more="false"><tr><td data-label="#">5</td>`));
    const pageRows = /<tbody id="trace"[^>]*>(.*?)<\/tbody>/s.exec(shown)![1].split(/(?=<tr>)/).slice(4).join('');
    expect(/<tbody[^>]*>(.*?)<\/tbody>/s.exec(rows.text)![1]).toBe(pageRows);

    const none = await get(`/console/runs/${live}/trace-rows?after=${AGENT_TRACE.length}`);
    expect(none.text).toBe(`<table><tbody data-state="running" data-after="${AGENT_TRACE.length}" data-ended="false" data-more="false"></tbody></table>`);
    expect((await get(`/console/runs/${runId}/trace-rows?after=0`)).text).toMatch(/^<table><tbody data-state="failed" data-after="12" data-ended="true"/);
  });

  it('are refused for a bad `after`, and to another tenant', async () => {
    expect((await get(`/console/runs/${runId}/trace-rows?after=-1`)).status).toBe(400);
    expect((await get(`/console/runs/${runId}/trace-rows?after=x`)).status).toBe(400);
    const other = await sessionCookie(app, await createOwner(app.database.db, { tenantName: 'Other' }));
    const res = await get(`/console/runs/${runId}/trace-rows?after=0`, other);
    expect([res.status, res.text.includes('WebFetch')]).toEqual([404, false]);
    expect((await request(app.app).get(`/console/runs/${runId}/trace-rows`)).status).toBe(303);
  });
});

describe('a job\'s agent', () => {
  const post = (path: string, form: Record<string, string>) => request(app.app).post(path).set('cookie', cookie).set('origin', 'http://localhost:3000').type('form').send(form);

  it('shows on the job\'s page with its settings, and in the job\'s settings to edit', async () => {
    const shown = (await get(`/console/jobs/${job.id}`)).text;
    expect(shown).toContain(
      '<dt>Agent</dt><dd><code>claude-code</code> (Claude Code); at most 30 turns and $2.50 a run; read-only: it reads and answers, changes nothing; allowed tools: <code>Bash(git:*)</code>, <code>Read</code></dd>',
    );
    const plain = await createJob(app, bearer, { name: 'Plain', promptTemplate: 'x' });
    expect((await get(`/console/jobs/${plain.id}`)).text).toContain('<dt>Agent</dt><dd><code>command</code> (the target’s own command)</dd>');
    const edit = (await get(`/console/jobs/${job.id}/edit`)).text;
    expect(edit).toContain('&quot;agent&quot;: {\n    &quot;kind&quot;: &quot;claude-code&quot;,\n    &quot;maxTurns&quot;: 30,');
  });

  it('is chosen in the new-job form with its limits, sent as the API takes it', async () => {
    const form = (await get('/console/jobs/new')).text;
    expect(form).toContain('<select id="field-agentKind" name="agentKind" aria-describedby="field-agentKind-hint"><option value="command">The target’s own command</option><option value="claude-code">Claude Code</option>');
    for (const kind of ['codex', 'gemini', 'opencode', 'cursor']) expect(form).toContain(`<option value="${kind}">`);
    expect(form).toContain('<input type="text" id="field-maxTurns" name="maxTurns"');
    expect(form).toContain('<input type="text" id="field-maxCostUsd" name="maxCostUsd"');

    const made = await post('/console/jobs', { name: 'Budgeted', promptTemplate: 'x', trigger: 'invocation', agentKind: 'codex', maxTurns: '12', maxCostUsd: '1.5' });
    expect(made.status).toBe(303);
    const id = /^\/console\/jobs\/(job_\w+)$/.exec(made.headers.location)![1];
    expect((await call(app, 'GET', `/api/v1/jobs/${id}`, { headers: bearer })).body.agent).toEqual({ kind: 'codex', maxTurns: 12, maxCostUsd: 1.5 });
    const unlimited = await post('/console/jobs', { name: 'Unlimited', promptTemplate: 'x', trigger: 'invocation', agentKind: 'gemini', maxTurns: '', maxCostUsd: '' });
    expect((await call(app, 'GET', `/api/v1/jobs/${unlimited.headers.location.split('/').pop()}`, { headers: bearer })).body.agent).toEqual({ kind: 'gemini' });
  });

  it('keeps a refused limit beside its field, with the values sent', async () => {
    for (const [sent, fieldName] of [
      [{ agentKind: 'claude-code', maxTurns: 'many' }, 'maxTurns'],
      [{ agentKind: 'claude-code', maxCostUsd: '0' }, 'maxCostUsd'],
      [{ agentKind: 'command', maxTurns: '5' }, 'maxTurns'],
    ] as const) {
      const refused = await post('/console/jobs', { name: 'Refused', promptTemplate: 'x', trigger: 'invocation', ...sent });
      expect([refused.status, refused.text]).toEqual([400, expect.stringMatching(new RegExp(`<p id="field-${fieldName}-error" class="error" role="alert">[^<]*agent\\.${fieldName}`))]);
      expect(refused.text).toContain(`<option value="${sent.agentKind}" selected>`);
    }
  });
});
