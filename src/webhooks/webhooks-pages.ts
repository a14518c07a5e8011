// The console's webhook sources and activity: a source with the deliveries it refused lately and what to
// check (the answer to "why do my sender's deliveries fail"), the deliveries of the tenant's sources, newest
// first, and one delivery with every trigger's decision on it, leaf by leaf (expected, actual, result) and
// the run it started: the answer to "why didn't my job run". They render what the webhooks service returns,
// as the API does.
import express, { type Request, type Response, Router } from 'express';
import type { components } from '../../generated/openapi';
import { keysetPage, keysetRequest } from '../http/pagination';
import { html, type Html } from '../http/html';
import { AppError, NotFound } from '../lib/errors';
import { sameOriginForms } from '../pages/session-pages';
import { jobView, type JobsService } from '../jobs/jobs-service';
import { consoleAction, consoleFind, consoleVisitor, facts, nextPage, queryParam, secretOnce, sendConsolePage, table, time, type ConsoleDeps } from '../pages/console-layout';
import { KEPT_PER_SOURCE, RECORDED_PER_MINUTE } from './webhooks-refusals';
import type { WebhooksService } from './webhooks-service';

type Decision = components['schemas']['WebhookActivity']['decisions'][number];
type Refusal = components['schemas']['WebhookRefusal'];

export interface WebhooksPagesDeps extends ConsoleDeps {
  webhooks: WebhooksService;
  jobs: JobsService;
  /** Why a body is not a source the API would create (its schema), or null. */
  sourceBodyProblem(body: unknown): string | null;
  /** Why a body is not a backtest the API would run (its schema), or null. */
  backtestBodyProblem(body: unknown): string | null;
  baseUrl: URL;
}

const FORMATS = ['github', 'gitlab', 'linear', 'slack', 'sentry', 'jira', 'standard-webhooks', 'hmac-sha256'] as const;
/** Senders that make the secret they sign with: rotating their source's secret means giving it the sender's new one. */
const SENDER_MADE = new Set(['slack', 'sentry']);

const sourceSecret = (source: { name: string; intakeUrl: string; signingSecret: string | null }) =>
  source.signingSecret !== null &&
  secretOnce({
    title: `Signing secret of ${source.name}`,
    advice: "Copy it now into the sender's webhook settings: it is not shown again (rotate it to get a new one).",
    secret: source.signingSecret,
    also: { label: 'Payload URL', value: source.intakeUrl },
  });

const json = (value: unknown) => (value === undefined ? '—' : JSON.stringify(value));
const sourceLink = (source: { id: string; name: string }): Html => html`<a href="/console/sources/${encodeURIComponent(source.id)}">${source.name}</a>`;

/** One refused delivery as a table row: when, the code answered, what to check, the header names, the body. */
const refusalRow = (refusal: Refusal): Html[] => [
  time(refusal.receivedAt),
  html`<code>${refusal.reason}</code> (${refusal.status})`,
  html`${refusal.advice}${refusal.unrecordedBefore ? html`<br><small>${refusal.unrecordedBefore} more refused just before it were counted, not recorded.</small>` : null}`,
  html`${refusal.headerNames.map((name, i) => html`${i ? ', ' : ''}<code>${name}</code>`)}`,
  html`${refusal.bodyBytes.toLocaleString('en')} bytes${refusal.bodySha256 ? html`<br><small>SHA-256 <code title="${refusal.bodySha256}">${refusal.bodySha256.slice(0, 16)}…</code></small>` : null}`,
];
const activityLink = (id: string, text: string): Html => html`<a href="/console/activity/${encodeURIComponent(id)}">${text}</a>`;

/** One trigger's decision: the outcome, the run it started, and each leaf with what it expected and found. */
function decisionBlock(decision: Decision, jobName: string): Html {
  const leaves = decision.details.map((detail) => [
    html`${detail.part}${detail.path ? html` <code>${detail.path}</code>` : null}`,
    html`${detail.op ?? ''}`,
    html`<code>${json(detail.expected)}</code>`,
    html`<code>${json(detail.actual)}</code>`,
    html`${detail.result ? 'holds' : 'does not hold'}`,
  ]);
  return html`<section class="decision"><h3><a href="/console/jobs/${encodeURIComponent(decision.jobId)}">${jobName}</a>, trigger <code>${decision.triggerId}</code>: ${decision.decision}</h3>
${decision.error ? html`<p class="error">${decision.error}</p>` : null}
${decision.runId ? html`<p>Started <a href="/console/runs/${encodeURIComponent(decision.runId)}">${decision.runId}</a>.</p>` : null}
${decision.flowControl ? html`<p>Flow control started no run: ${decision.flowControl.message}${decision.flowControl.runId ? html` (<a href="/console/runs/${encodeURIComponent(decision.flowControl.runId)}">${decision.flowControl.action === 'folded' ? 'the run it folded into' : 'the run holding the key'}</a>)` : null}</p>` : null}
${table(['Part', 'Operator', 'Expected', 'Found', 'Result'], leaves, 'No conditions: every delivery of its events matches.')}
</section>`;
}

export function webhooksPages(deps: WebhooksPagesDeps): Router {
  const router = Router();
  const sameOrigin = sameOriginForms(deps.baseUrl);
  const form = express.urlencoded({ extended: false, limit: '16kb' });

  /** The sources page; with a secret to show once, or a refused form with its reason beside it. */
  async function showSources(req: Request, res: Response, shown: { secret?: Parameters<typeof sourceSecret>[0]; refused?: { name: string; format: string; error: string } } = {}) {
    const visitor = await consoleVisitor(deps, req, res);
    if (!visitor) return;
    const sources = await deps.webhooks.listSources(deps.tenantDb(visitor.principal.tenantId), { limit: 100 });
    const rows = sources.map((source) => [
      sourceLink(source),
      html`${source.format}`,
      html`<code>${source.intakeUrl}</code>`,
      html`<a href="/console/activity?sourceId=${encodeURIComponent(source.id)}">Deliveries</a>`,
      html`${source.githubAppId ? null : html`<form method="post" action="/console/sources/${encodeURIComponent(source.id)}/rotate">${SENDER_MADE.has(source.format) ? html`<input type="password" name="signingSecret" required minlength="8" autocomplete="off" placeholder="The sender's new secret" aria-label="The sender's new secret for ${source.name}"> ` : null}<button type="submit" class="secondary" aria-label="${SENDER_MADE.has(source.format) ? 'Replace' : 'Rotate'} the secret of ${source.name}">${SENDER_MADE.has(source.format) ? 'Replace secret' : 'Rotate secret'}</button></form>`}
<form method="post" action="/console/sources/${encodeURIComponent(source.id)}/delete"><button type="submit" class="secondary" aria-label="Delete ${source.name}">Delete</button></form>`,
    ]);
    const { refused } = shown;
    if (refused) res.status(400);
    if (shown.secret) res.set('cache-control', 'no-store');
    sendConsolePage(
      res,
      visitor,
      '/console/sources',
      'Webhook sources',
      html`${shown.secret ? sourceSecret(shown.secret) || null : null}
${table(['Name', 'Format', 'Payload URL', '', ''], rows, 'No webhook source yet.')}
<h2>New source</h2>
<form method="post" action="/console/sources">
<label for="name">Name</label><input type="text" id="name" name="name" required value="${refused?.name ?? ''}"${refused ? html` aria-invalid="true" aria-describedby="source-error"` : null}>
<label for="format">Format</label><select id="format" name="format">${FORMATS.map((format) => html`<option${format === (refused?.format ?? 'github') ? html` selected` : null}>${format}</option>`)}</select>
<label for="signingSecret">Secret from the sender (optional)</label><input type="password" id="signingSecret" name="signingSecret" autocomplete="off" aria-describedby="signing-secret-help">
<p id="signing-secret-help" class="help">For Slack, the app's signing secret; for Sentry, the integration's client secret; for a GitLab webhook with a signing token, that token. Left empty, Flows makes a secret and shows it once.</p>
${refused ? html`<p id="source-error" class="error" role="alert">${refused.error}</p>` : null}
<button type="submit">Create</button></form>`,
    );
  }

  router.get('/console/sources', (req, res) => showSources(req, res));

  /** A source: its settings, and the deliveries intake refused lately with what to check. */
  router.get('/console/sources/:sourceId', async (req: Request, res: Response) => {
    const read = await consoleFind(deps, req, res, '/console/sources', 'No such webhook source in this tenant.', (db) => deps.webhooks.getSource(db, req.params.sourceId as string));
    if (!read) return;
    const { visitor, db, found: source } = read;
    const list = `console/sources/${source.id}/refusals`;
    const request = keysetRequest<string>(list, { cursor: queryParam(req, 'cursor') }, 'string');
    const { page, headers } = keysetPage(req, list, await deps.webhooks.listRefusals(db, source.id, request), request, (refusal) => refusal.id);
    const details: [string, Html][] = [
      ['Format', html`${source.format}`],
      ...(source.signatureHeader ? [['Signature header', html`<code>${source.signatureHeader}</code>`] as [string, Html]] : []),
      ...(source.githubAppId ? [['GitHub App', html`<code>${source.githubAppId}</code> (deliveries are verified with its webhook secret)`] as [string, Html]] : []),
      ['Payload URL', html`<code>${source.intakeUrl}</code>`],
      ['Created', time(source.createdAt)],
    ];
    sendConsolePage(
      res,
      visitor,
      '/console/sources',
      source.name,
      html`${facts(details)}
<p><a href="/console/activity?sourceId=${encodeURIComponent(source.id)}">Deliveries it took</a></p>
<h2>Refused deliveries</h2>
<p>The deliveries intake refused lately, newest first, with what to check. Neither their bodies nor their headers' values are kept. At most ${RECORDED_PER_MINUTE} a minute are recorded (the others are counted on the next one) and the newest ${KEPT_PER_SOURCE} kept. A delivery sent to a payload URL no source has is refused with <code>unknown_source</code> and recorded nowhere: check the URL in the sender.</p>
${table(['Received', 'Refused with', 'What to check', 'Headers sent', 'Body'], page.map(refusalRow), 'No delivery refused lately.')}${nextPage(headers)}`,
    );
  });

  /**
   * A job's backtest: its webhook triggers as a draft to edit (as JSON, as `POST /api/v1/jobs/{jobId}/backtest`
   * takes them), and what they would have decided on the recorded deliveries of the last days. Nothing is saved.
   */
  async function showBacktest(req: Request, res: Response) {
    const read = await consoleFind(deps, req, res, '/console/jobs', 'No such job in this tenant.', async (db) => {
      // Only its triggers are shown: the live job, without the warnings `get` works out.
      const row = await deps.jobs.find(db, req.params.jobId as string);
      if (!row) throw new NotFound();
      return jobView(row);
    });
    if (!read) return;
    const { visitor, db, found: job } = read;
    const saved = JSON.stringify(job.triggers.filter((trigger) => trigger.type === 'webhook'), null, 2);
    const posted = req.method === 'POST';
    const text = posted && typeof req.body?.triggers === 'string' ? req.body.triggers : saved;
    const days = Math.min(30, Math.max(1, Number(posted ? req.body?.days : 7) || 7));
    let outcome: Html | null = null;
    if (posted) {
      let draft: unknown;
      let problem: string | null = null;
      try {
        draft = JSON.parse(text);
      } catch (err) {
        problem = `The triggers are not JSON: ${(err as Error).message}.`;
      }
      const until = new Date();
      const body = { triggers: draft, since: new Date(until.getTime() - days * 86_400_000).toISOString(), until: until.toISOString() };
      problem ??= deps.backtestBodyProblem(body);
      if (!problem) {
        try {
          const result = await deps.webhooks.backtest(db, job.id, body as Parameters<WebhooksService['backtest']>[2]);
          const rows = result.results.map((delivery) => [
            activityLink(delivery.activityId, delivery.event),
            time(delivery.receivedAt),
            html`${delivery.decisions.map((decision) => html`<div><code>${decision.triggerId}</code>: ${decision.decision}${decision.error ? html` (${decision.error})` : null}${decision.flowControl ? html`, then flow control: ${decision.flowControl.outcome}` : null}</div>`)}`,
          ]);
          outcome = html`<h2>Outcome</h2><p>${result.matched} of ${result.evaluated} recorded deliveries of the last ${days} days would have matched.${result.assumedRunSeconds === undefined ? null : html` The job's flow control is applied to the matches in time order, each run taken to last ${result.assumedRunSeconds} s (the median of its latest runs).`}</p>
${table(['Delivery', 'Received', 'Decisions'], rows, 'No delivery of these triggers\u2019 events was recorded in the window.')}`;
        } catch (err) {
          if (!(err instanceof AppError) || err.status >= 500) throw err;
          problem = err.message;
        }
      }
      if (problem) {
        res.status(400);
        outcome = html`<p id="triggers-error" class="error" role="alert">${problem}</p>`;
      }
    }
    sendConsolePage(
      res,
      visitor,
      '/console/jobs',
      `Backtest of ${job.name}`,
      html`<p>Edit the webhook triggers and see what they would have decided on the deliveries recorded lately. Nothing is saved: <a href="/console/jobs/${encodeURIComponent(job.id)}">back to the job</a>.</p>
<form method="post" action="/console/jobs/${encodeURIComponent(job.id)}/backtest">
<label for="triggers">Draft triggers (JSON)</label>
<textarea id="triggers" name="triggers" rows="14"${res.statusCode === 400 ? html` aria-invalid="true" aria-describedby="triggers-error"` : null}>${text}</textarea>
<label for="days">Days back</label><input type="text" inputmode="numeric" id="days" name="days" value="${days}">
<button type="submit">Backtest</button></form>
${outcome}`,
    );
  }

  router.get('/console/jobs/:jobId/backtest', showBacktest);
  router.post('/console/jobs/:jobId/backtest', sameOrigin, express.urlencoded({ extended: false, limit: '256kb' }), showBacktest);

  router.post('/console/sources', sameOrigin, form, consoleAction(deps, async (req, res, db) => {
    const signingSecret = String(req.body?.signingSecret ?? '');
    const body = { name: String(req.body?.name ?? ''), format: String(req.body?.format ?? ''), ...(signingSecret && { signingSecret }) };
    const problem = deps.sourceBodyProblem(body);
    if (problem) return showSources(req, res, { refused: { name: body.name, format: body.format, error: problem } });
    const source = await deps.webhooks.createSource(db, body as Parameters<WebhooksService['createSource']>[1]);
    await showSources(req, res, { secret: source });
  }));

  router.post('/console/sources/:sourceId/rotate', sameOrigin, form, consoleAction(deps, async (req, res, db) => {
    const source = await deps.webhooks.rotateSecret(db, req.params.sourceId as string, String(req.body?.signingSecret ?? '') || undefined);
    await showSources(req, res, { secret: source });
  }));

  router.post('/console/sources/:sourceId/delete', sameOrigin, consoleAction(deps, async (req, res, db) => {
    await deps.webhooks.deleteSource(db, req.params.sourceId as string);
    res.redirect(303, '/console/sources');
  }));

  router.get('/console/activity', async (req: Request, res: Response) => {
    const visitor = await consoleVisitor(deps, req, res);
    if (!visitor) return;
    const db = deps.tenantDb(visitor.principal.tenantId);
    const sourceId = queryParam(req, 'sourceId');
    const list = `console/activity?${sourceId ?? ''}`;
    const request = keysetRequest<string>(list, { cursor: queryParam(req, 'cursor') }, 'string');
    const [sources, activity] = await Promise.all([deps.webhooks.listSources(db, { limit: 100 }), deps.webhooks.listActivity(db, request, { sourceId })]);
    const { page, headers } = keysetPage(req, list, activity, request, (row) => row.id);
    const sourceName = new Map(sources.map((source) => [source.id, source.name]));
    const rows = page.map((row) => [
      activityLink(row.id, row.action ? `${row.event}.${row.action}` : row.event),
      html`${sourceName.get(row.sourceId) ?? row.sourceId}`,
      time(row.receivedAt),
      row.evaluatedAt ? html`${row.decisions.filter((d) => d.decision === 'match').length} matched, ${row.decisions.filter((d) => d.decision === 'error').length} errors, ${row.missCount} missed` : html`waiting`,
    ]);
    sendConsolePage(
      res,
      visitor,
      '/console/activity',
      'Webhook activity',
      html`<form method="get" action="/console/activity" class="filters">
<div><label for="sourceId">Source</label><select id="sourceId" name="sourceId"><option value="">every source</option>${sources.map((source) => html`<option value="${source.id}"${source.id === sourceId ? html` selected` : null}>${source.name} (${source.format})</option>`)}</select></div>
<button type="submit">Show</button></form>
${table(['Delivery', 'Source', 'Received', 'Decided'], rows, 'No delivery yet.')}${nextPage(headers)}`,
    );
  });

  router.get('/console/activity/:activityId', async (req: Request, res: Response) => {
    const read = await consoleFind(deps, req, res, '/console/activity', 'No such delivery in this tenant.', (db) => deps.webhooks.getActivity(db, req.params.activityId as string));
    if (!read) return;
    const { visitor, db, found: activity } = read;
    const live = await deps.jobs.live(db);
    const name = activity.action ? `${activity.event}.${activity.action}` : activity.event;
    const details: [string, Html][] = [
      ['Source', html`<code>${activity.sourceId}</code>`],
      ['Delivery id', html`<code>${activity.deliveryId}</code>`],
      ['Received', time(activity.receivedAt)],
      ['Decided', activity.evaluatedAt ? time(activity.evaluatedAt) : html`not yet: it waits for evaluation`],
    ];
    sendConsolePage(
      res,
      visitor,
      '/console/activity',
      `Delivery ${name}`,
      html`${facts(details)}
<h2>What each trigger decided</h2>
${activity.decisions.length ? activity.decisions.map((decision) => decisionBlock(decision, live.find(decision.jobId)?.name ?? decision.jobId)) : html`<p>No enabled trigger listens to ${name} on this source.</p>`}
<details><summary>The delivery as the triggers saw it</summary><pre>${JSON.stringify(activity.context, null, 2)}</pre></details>`,
    );
  });

  return router;
}
