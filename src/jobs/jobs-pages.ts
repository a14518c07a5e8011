// The console's job pages: the tenant's jobs, and one job with its triggers, templates, settings, warnings
// and recent runs. They render what the jobs service returns, as the API's handlers do.
import express, { type Request, type Response, Router } from 'express';
import type { components } from '../../generated/openapi';
import type { TenantDb } from '../db/tenant-scope';
import { keysetPage, keysetRequest } from '../http/pagination';
import { html, type Html } from '../http/html';
import { AppError, ValidationFailed } from '../lib/errors';
import { consoleAction, consoleFind, consoleVisitor, facts, field, formError, nextPage, queryParam, sendConsolePage, table, time, type ConsoleDeps } from '../pages/console-layout';
import { sameOriginForms } from '../pages/session-pages';
import { AGENT_CHOICES, AGENT_FIELDS, agentOfForm, agentText } from './job-agent-pages';
import { InvalidTemplate, type Trigger } from './jobs-fns';
import type { JobsService } from './jobs-service';

type RunView = components['schemas']['Run'];
type JobView = components['schemas']['Job'];

export interface JobsPagesDeps extends ConsoleDeps {
  jobs: JobsService;
  /** The job's latest runs, newest first. */
  recentRuns(db: TenantDb, jobId: string): Promise<RunView[]>;
  /** The latest run of each of the jobs, by job id. */
  latestRuns(db: TenantDb, jobIds: string[]): Promise<Map<string, RunView>>;
  /** What the new-job form offers to choose from: the tenant's execution targets and webhook sources. */
  choices(db: TenantDb): Promise<{ targets: { id: string; name: string }[]; sources: { id: string; name: string }[] }>;
  /** Invokes the job as the API does. */
  invoke(db: TenantDb, jobId: string, data: Record<string, unknown>): Promise<{ runId: string }>;
  /** Why a body is not one the API would take to create or update a job (its schema), or null. */
  jobBodyProblem(operationId: 'createJob' | 'updateJob', body: unknown): string | null;
  baseUrl: URL;
}

/** What starts a trigger, in a line. */
function triggerSummary(trigger: Trigger): string {
  switch (trigger.type) {
    case 'webhook':
      return `${trigger.events.join(', ')} from ${trigger.sourceId}${trigger.conditions ? ', with conditions' : ''}`;
    case 'schedule':
      return `${trigger.cron} (${trigger.timezone ?? 'UTC'})`;
    case 'run':
      return `runs of ${trigger.jobId} that end ${trigger.states.join(' or ')}${trigger.conditions ? ', with conditions' : ''}`;
    case 'invocation':
      return trigger.inputSchema ? 'direct invocation, data checked against its input schema' : 'direct invocation';
  }
}

/**
 * Whether the job's page offers to invoke it: it has an enabled invocation trigger, or no trigger at all (its
 * templates were then checked for a direct invocation). Others' templates read what their triggers provide.
 */
const takesInvocations = (triggers: Trigger[]) => !triggers.length || triggers.some((trigger) => trigger.type === 'invocation' && trigger.enabled);

/** How a job that takes no invocation from its page starts, in place of the Invoke form. */
function howItStarts(triggers: Trigger[], edit: string): Html {
  const ways = { webhook: 'a matching webhook delivery', schedule: 'its schedule', run: 'the end of a run it watches', invocation: null };
  const starts = [...new Set(triggers.filter((trigger) => trigger.enabled).map((trigger) => ways[trigger.type]))].filter(Boolean);
  const invocable = triggers.some((trigger) => trigger.type === 'invocation') ? 'enable its invocation trigger' : 'add an invocation trigger';
  return html`<h2>How it starts</h2><p>${starts.length ? `It starts on ${starts.join(' or ')}, as its triggers below say` : 'Its triggers are all disabled: nothing starts it'}. To run it from here, <a href="${edit}">${invocable}</a>.</p>`;
}

/** What a job's concurrency control does, in a line. */
function keyedText({ key, limit, onConflict = 'queue' }: NonNullable<JobView['flowControl']['concurrency']>): Html {
  const busy = { queue: 'waits its turn', 'cancel-running': 'supersedes the older ones', skip: 'is not started' }[onConflict];
  return html`${limit} at once ${key ? html`per value of <code>${key}</code>` : 'for the whole job'}; a new run of a busy key ${busy}`;
}

/** What a job's rate limit allows, in a line. */
const rateText = ({ key, limit, period }: NonNullable<JobView['flowControl']['rateLimit']>): Html =>
  html`${limit} runs per ${period} ${key ? html`per value of <code>${key}</code>` : 'for the whole job'}; beyond it nothing starts`;

/** A job's settings as the update operation takes them, to edit. */
function editableJson(job: JobView): string {
  const { name, slug, promptTemplate, runNameTemplate, executionTargetId, concurrencyLimit, flowControl, model, effort, agent, env, triggers } = job;
  return JSON.stringify({ name, slug, promptTemplate, runNameTemplate, executionTargetId, concurrencyLimit, flowControl, model, effort, agent, env, triggers }, null, 2);
}

/** The fields of the new-job form, each where a refusal naming it is shown. */
const NEW_JOB_FIELDS = ['name', 'promptTemplate', 'executionTargetId', 'agentKind', 'maxTurns', 'maxCostUsd', 'sourceId', 'events', 'cron', 'timezone'];

/** The field a refusal names first (`name`, `triggers[0].cron` → `cron`, `agent.maxTurns` → `maxTurns`), or null. */
export function fieldOfProblem(message: string): string | null {
  const named = /`([^`]+)`/.exec(message)?.[1];
  if (!named) return null;
  return /^triggers\[0\]\.(\w+)/.exec(named)?.[1] ?? AGENT_FIELDS[named] ?? named;
}

/** The job the new-job form describes, as `POST /api/v1/jobs` takes it; empty fields left out. */
function jobOfForm(form: Record<string, string>): Record<string, unknown> {
  const given = (name: string) => form[name]?.trim() || undefined;
  const triggers: Record<string, unknown>[] = [];
  if (form.trigger === 'webhook') {
    triggers.push({ type: 'webhook', sourceId: given('sourceId'), events: (given('events') ?? '').split(',').map((event) => event.trim()).filter(Boolean) });
  } else if (form.trigger === 'schedule') {
    triggers.push({ type: 'schedule', cron: given('cron'), timezone: given('timezone') });
  } else {
    triggers.push({ type: 'invocation' });
  }
  // Absent fields are left out rather than sent as undefined, so the schema names what is missing.
  return JSON.parse(JSON.stringify({ name: form.name ?? '', promptTemplate: form.promptTemplate ?? '', executionTargetId: given('executionTargetId'), agent: agentOfForm(given), triggers }));
}

/** What the JSON job form starts with: a job that runs when invoked. */
const NEW_JOB = JSON.stringify(
  { name: 'Say hello', promptTemplate: 'Say hello to {{ data.who }}.', triggers: [{ type: 'invocation', defaultData: { who: 'world' } }] },
  null,
  2,
);

export const runLink = (run: RunView, text = run.name): Html => html`<a href="/console/runs/${encodeURIComponent(run.id)}">${text}</a>`;

export function jobsPages(deps: JobsPagesDeps): Router {
  const router = Router();
  const sameOrigin = sameOriginForms(deps.baseUrl);
  const form = express.urlencoded({ extended: false, limit: '64kb' });

  router.get('/console/jobs', async (req: Request, res: Response) => {
    const visitor = await consoleVisitor(deps, req, res);
    if (!visitor) return;
    const list = 'console/jobs';
    const request = keysetRequest<string>(list, { cursor: queryParam(req, 'cursor') }, 'string');
    const db = deps.tenantDb(visitor.principal.tenantId);
    const { page, headers } = keysetPage(req, list, await deps.jobs.list(db, request, {}), request, (job) => job.id);
    const latest = await deps.latestRuns(db, page.map((job) => job.id));
    const rows = page.map((job) => [
      html`<a href="/console/jobs/${encodeURIComponent(job.id)}">${job.name}</a>`,
      html`<code>${job.slug}</code>`,
      html`${job.enabled ? 'enabled' : 'disabled'}`,
      html`${[...new Set(job.triggers.map((trigger) => trigger.type))].join(', ') || 'none'}`,
      html`${job.executionTargetId ?? 'none'}`,
      latest.has(job.id) ? html`${runLink(latest.get(job.id)!, latest.get(job.id)!.state)}, ${time(latest.get(job.id)!.createdAt)}` : html`none yet`,
    ]);
    sendConsolePage(res, visitor, '/console/jobs', 'Jobs', html`<p><a href="/console/jobs/new">New job</a></p>
${table(['Name', 'Slug', 'State', 'Triggers', 'Target', 'Last run'], rows, 'No job yet.')}${nextPage(headers)}`);
  });

  /**
   * The job form, as JSON: a new job (`editing` absent), or the changes to one; after a refusal, with the
   * text sent and the reason beside it.
   */
  function showJobForm(res: Response, visitor: Parameters<typeof sendConsolePage>[1], { editing, text, error }: { editing?: { id: string; name: string }; text: string; error?: string }) {
    if (error) res.status(400);
    const action = editing ? `/console/jobs/${encodeURIComponent(editing.id)}/edit` : '/console/jobs';
    sendConsolePage(
      res,
      visitor,
      '/console/jobs',
      editing ? `Edit ${editing.name}` : 'New job',
      html`<form method="post" action="${action}">
<label for="job">${editing ? html`The changes as JSON, as <code>PATCH /api/v1/jobs/{jobId}</code> takes them: fields left out stay as they are, <code>null</code> removes one, <code>triggers</code> replaces the list (keep the <code>id</code> of those you keep)` : html`The job as JSON, as <code>POST /api/v1/jobs</code> takes it`}</label>
<textarea id="job" name="job" rows="22"${error ? html` aria-invalid="true" aria-describedby="job-error"` : null}>${text}</textarea>
${error ? html`<p id="job-error" class="error" role="alert">${error}</p>` : null}
<button type="submit">${editing ? 'Save' : 'Create'}</button></form>
<p>Templates and conditions are checked as the API checks them: a name the triggers do not provide is refused, with the closest one.</p>
${editing ? html`<p><a href="/console/jobs/${encodeURIComponent(editing.id)}">Back to the job</a></p>` : null}`,
    );
  }

  /** The JSON of a job form's text, checked against the operation's schema, then saved by `save`; a refusal stays on the form. */
  async function saveJobForm(req: Request, res: Response, editing: { id: string; name: string } | undefined, save: (db: TenantDb, body: never) => Promise<{ id: string }>) {
    const visitor = await consoleVisitor(deps, req, res);
    if (!visitor) return;
    const text = typeof req.body?.job === 'string' ? req.body.job : '';
    const refuse = (error: string) => showJobForm(res, visitor, { editing, text, error });
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      return refuse(`The job is not JSON: ${(err as Error).message}.`);
    }
    const problem = deps.jobBodyProblem(editing ? 'updateJob' : 'createJob', body);
    if (problem) return refuse(problem);
    try {
      const job = await save(deps.tenantDb(visitor.principal.tenantId), body as never);
      res.redirect(303, `/console/jobs/${encodeURIComponent(job.id)}`);
    } catch (err) {
      if (err instanceof AppError && err.status < 500) return refuse(err.message);
      throw err;
    }
  }

  /** The new-job form, field by field; after a refusal, with what was sent and the reason beside its field. */
  async function showNewJob(req: Request, res: Response, refused?: { form: Record<string, string>; error: string }) {
    const visitor = await consoleVisitor(deps, req, res);
    if (!visitor) return;
    const { targets, sources } = await deps.choices(deps.tenantDb(visitor.principal.tenantId));
    const values = refused?.form ?? { trigger: 'invocation' };
    const at = refused && (NEW_JOB_FIELDS.includes(fieldOfProblem(refused.error) as string) ? fieldOfProblem(refused.error) : 'top');
    const errorOf = (name: string) => (at === name ? refused!.error : undefined);
    const input = (name: string, label: string, extra: Partial<Parameters<typeof field>[0]> = {}) => field({ name, label, value: values[name], error: errorOf(name), ...extra });
    if (refused) res.status(400);
    sendConsolePage(
      res,
      visitor,
      '/console/jobs',
      'New job',
      html`<form method="post" action="/console/jobs">
${at === 'top' ? formError(refused!.error) : null}
${input('name', 'Name')}
${input('promptTemplate', 'Prompt template', { type: 'textarea', hint: 'Liquid: {{ data.who }} for an invocation\u2019s data, {{ payload.issue.title }} for a GitHub delivery.' })}
${input('executionTargetId', 'Execution target', { options: targets.map((target) => ({ value: target.id, label: target.name })), optional: true, hint: 'None: the operator\u2019s default.' })}
${input('agentKind', 'Agent', { options: AGENT_CHOICES, hint: 'The target\u2019s own command, or a coding agent\u2019s CLI whose events the trace shows (local and Docker targets).' })}
${input('maxTurns', 'Most turns a run may take', { optional: true, hint: 'A coding agent\u2019s runs only. Empty: no limit.' })}
${input('maxCostUsd', 'Most a run may cost, in US dollars', { optional: true, hint: 'A coding agent\u2019s runs only, by the cost it reports or the operator\u2019s prices. Empty: no limit.' })}
<fieldset><legend>Runs when</legend>${[
        ['invocation', 'it is invoked'],
        ['webhook', 'a webhook source delivers an event'],
        ['schedule', 'a schedule fires'],
      ].map(([kind, label]) => html`<label><input type="radio" name="trigger" value="${kind}"${values.trigger === kind ? html` checked` : null}> ${label}</label>`)}</fieldset>
${input('sourceId', 'Webhook source (webhook)', { options: sources.map((source) => ({ value: source.id, label: source.name })), optional: true })}
${input('events', 'Events (webhook)', { optional: true, hint: 'Comma-separated, as the source names them: issues.labeled, pull_request.*' })}
${input('cron', 'Cron expression (schedule)', { optional: true, hint: 'Five fields: 0 9 * * 1-5 is 09:00 on weekdays.' })}
${input('timezone', 'Time zone (schedule)', { optional: true, hint: 'An IANA name such as Europe/Berlin. Empty: UTC.' })}
<button type="submit">Create</button></form>
<p>Templates are checked as the API checks them: a name the trigger does not provide is refused, with the closest one. Conditions, input schemas and more triggers: edit the job afterwards, or <a href="/console/jobs/new-json">paste a job as JSON</a>.</p>`,
    );
  }

  router.get('/console/jobs/new', (req, res) => showNewJob(req, res));

  router.get('/console/jobs/new-json', async (req, res) => {
    const visitor = await consoleVisitor(deps, req, res);
    if (visitor) showJobForm(res, visitor, { text: NEW_JOB });
  });

  // A job from the form field by field, or pasted as JSON (`job`).
  router.post('/console/jobs', sameOrigin, form, consoleAction(deps, async (req, res, db) => {
    if (typeof req.body?.job === 'string') return saveJobForm(req, res, undefined, (own, body) => deps.jobs.create(own, body));
    const sent = Object.fromEntries(Object.entries(req.body ?? {}).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
    const body = jobOfForm(sent);
    const problem = deps.jobBodyProblem('createJob', body);
    try {
      if (problem) return await showNewJob(req, res, { form: sent, error: problem });
      const job = await deps.jobs.create(db, body as never);
      res.redirect(303, `/console/jobs/${encodeURIComponent(job.id)}`);
    } catch (err) {
      if (err instanceof AppError && err.status < 500) return showNewJob(req, res, { form: sent, error: err.message });
      throw err;
    }
  }));

  router.get('/console/jobs/:jobId/edit', async (req, res) => {
    const read = await consoleFind(deps, req, res, '/console/jobs', 'No such job in this tenant.', (db) => deps.jobs.get(db, req.params.jobId as string));
    if (!read) return;
    const { visitor, found: job } = read;
    showJobForm(res, visitor, { editing: job, text: editableJson(job) });
  });

  router.post('/console/jobs/:jobId/edit', sameOrigin, form, async (req, res) => {
    const read = await consoleFind(deps, req, res, '/console/jobs', 'No such job in this tenant.', (db) => deps.jobs.get(db, req.params.jobId as string));
    if (read) await saveJobForm(req, res, read.found, (db, body) => deps.jobs.update(db, read.found.id, body));
  });

  /** A job's page; after a refused invocation, with the data sent and the error beside it. */
  async function showJob(req: Request, res: Response, invocation: { data: string; error: string } | null = null) {
    const read = await consoleFind(deps, req, res, '/console/jobs', 'No such job in this tenant.', (db) => deps.jobs.get(db, req.params.jobId as string));
    if (!read) return;
    const { visitor, db, found: job } = read;
    const runs = await deps.recentRuns(db, job.id);
    const at = `/console/jobs/${encodeURIComponent(job.id)}`;
    const settings: [string, Html][] = [
      ['Slug', html`<code>${job.slug}</code>`],
      ['State', html`${job.enabled ? 'enabled' : 'disabled'} <form method="post" action="${at}/${job.enabled ? 'disable' : 'enable'}"><button type="submit" class="secondary">${job.enabled ? 'Disable' : 'Enable'}</button></form>`],
      ['Execution target', html`${job.executionTargetId ?? 'none'}`],
      ['Agent', agentText(job.agent)],
      ['Model and effort', html`${job.model ?? 'the agent\u2019s default'}, ${job.effort ?? 'default effort'}`],
      ['Runs at once', html`${job.concurrencyLimit}`],
      ...(job.flowControl.concurrency ? [['Per key', keyedText(job.flowControl.concurrency)] as [string, Html]] : []),
      ...(job.flowControl.rateLimit ? [['Rate limit', rateText(job.flowControl.rateLimit)] as [string, Html]] : []),
      ...(job.flowControl.retry ? [['Retries', html`up to ${job.flowControl.retry.maxAttempts} attempts on ${job.flowControl.retry.on.join(', ')}`] as [string, Html]] : []),
      ...(job.flowControl.debounce ? [['Debounce', html`deliveries ${job.flowControl.debounce.key ? html`of one value of <code>${job.flowControl.debounce.key}</code>` : 'of the job'} fold into one run, started ${job.flowControl.debounce.period} after the last${job.flowControl.debounce.maxWait ? ` (at most ${job.flowControl.debounce.maxWait} after the first)` : ''}`] as [string, Html]] : []),
      ...(job.flowControl.ttl ? [['Longest wait', html`${job.flowControl.ttl}: a run still queued then ends <code>expired</code>`] as [string, Html]] : []),
      ['Created', time(job.createdAt)],
      ['Changed', time(job.updatedAt)],
    ];
    const inputSchema = job.triggers.flatMap((trigger) => (trigger.type === 'invocation' && trigger.enabled && trigger.inputSchema ? [trigger.inputSchema] : []))[0];
    if (invocation) res.status(400);
    sendConsolePage(
      res,
      visitor,
      '/console/jobs',
      job.name,
      html`${job.warnings?.length ? html`<section aria-labelledby="warnings"><h2 id="warnings">Warnings</h2><ul>${job.warnings.map((warning) => html`<li><code>${warning.field}</code>: ${warning.message}</li>`)}</ul></section>` : null}
${facts(settings)}
${!job.enabled
  ? null
  : !takesInvocations(job.triggers)
  ? howItStarts(job.triggers, `${at}/edit`)
  : html`<h2>Invoke</h2><form method="post" action="${at}/invoke">
<label for="data">Data (JSON)</label>
<textarea id="data" name="data" rows="4"${invocation ? html` aria-invalid="true" aria-describedby="data-error"` : null}>${invocation?.data ?? '{}'}</textarea>
${invocation ? html`<p id="data-error" class="error" role="alert">${invocation.error}</p>` : null}
${inputSchema ? html`<details><summary>The data must match this schema</summary><pre>${JSON.stringify(inputSchema, null, 2)}</pre></details>` : null}
<button type="submit">Invoke</button></form>`}
<h2>Prompt template</h2><pre>${job.promptTemplate}</pre>
${job.runNameTemplate ? html`<h2>Run name template</h2><pre>${job.runNameTemplate}</pre>` : null}
<h2>Triggers</h2>
${table(['Id', 'Kind', 'State', 'When'], job.triggers.map((trigger) => [html`<code>${trigger.id}</code>`, html`${trigger.type}`, html`${trigger.enabled ? 'enabled' : 'disabled'}`, html`${triggerSummary(trigger)}`]), 'No trigger: the job runs when it is invoked.')}
<h2>Recent runs</h2>
${table(['Run', 'State', 'Started by', 'Created'], runs.map((run) => [runLink(run), html`${run.state}`, html`${run.trigger.type}`, time(run.createdAt)]), 'No run yet.')}
<p><a href="${at}/edit">Edit this job</a> · <a href="${at}/delete">Delete this job</a></p>
<p><a href="/console/runs?jobId=${encodeURIComponent(job.id)}">All runs of this job</a>${job.triggers.some((trigger) => trigger.type === 'webhook') ? html` · <a href="/console/jobs/${encodeURIComponent(job.id)}/backtest">Backtest its webhook triggers</a>` : null}</p>`,
    );
  }

  router.get('/console/jobs/:jobId', (req, res) => showJob(req, res));

  // Deleting asks first, on a page of its own: a job's queued and running runs are stopped with it.
  router.get('/console/jobs/:jobId/delete', async (req, res) => {
    const read = await consoleFind(deps, req, res, '/console/jobs', 'No such job in this tenant.', (db) => deps.jobs.get(db, req.params.jobId as string));
    if (!read) return;
    const { visitor, found: job } = read;
    sendConsolePage(
      res,
      visitor,
      '/console/jobs',
      `Delete ${job.name}?`,
      html`<p>The job stops taking deliveries, schedules and invocations, and its queued and running runs are stopped. Its finished runs stay readable.</p>
<form method="post" action="/console/jobs/${encodeURIComponent(job.id)}/delete"><button type="submit">Delete ${job.name}</button></form>
<p><a href="/console/jobs/${encodeURIComponent(job.id)}">Keep it</a></p>`,
    );
  });

  router.post('/console/jobs/:jobId/delete', sameOrigin, consoleAction(deps, async (req, res, db) => {
    await deps.jobs.delete(db, req.params.jobId as string);
    res.redirect(303, '/console/jobs');
  }));

  for (const enabled of [true, false]) {
    router.post(
      `/console/jobs/:jobId/${enabled ? 'enable' : 'disable'}`,
      sameOrigin,
      consoleAction(deps, async (req, res, db) => {
        const job = await deps.jobs.setEnabled(db, req.params.jobId as string, enabled);
        res.redirect(303, `/console/jobs/${encodeURIComponent(job.id)}`);
      }),
    );
  }

  // The data is checked as the API checks it (the invocation trigger's input schema); a refusal shows on the form.
  router.post('/console/jobs/:jobId/invoke', sameOrigin, form, consoleAction(deps, async (req, res, db) => {
    const text = typeof req.body?.data === 'string' && req.body.data.trim() ? req.body.data : '{}';
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (err) {
      return showJob(req, res, { data: text, error: `The data is not JSON: ${(err as Error).message}.` });
    }
    if (!data || typeof data !== 'object' || Array.isArray(data)) return showJob(req, res, { data: text, error: 'The data must be a JSON object.' });
    try {
      const { runId } = await deps.invoke(db, req.params.jobId as string, data as Record<string, unknown>);
      res.redirect(303, `/console/runs/${encodeURIComponent(runId)}`);
    } catch (err) {
      if (err instanceof ValidationFailed || err instanceof InvalidTemplate) return showJob(req, res, { data: text, error: err.message });
      throw err;
    }
  }));

  return router;
}
