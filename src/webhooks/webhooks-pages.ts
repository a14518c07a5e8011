// The console's webhook activity: the deliveries of the tenant's sources, newest first, and one delivery
// with every trigger's decision on it, leaf by leaf (expected, actual, result) and the run it started: the
// answer to "why didn't my job run". They render what the webhooks service returns, as the API does.
import { type Request, type Response, Router } from 'express';
import type { components } from '../../generated/openapi';
import type { TenantDb } from '../db/tenant-scope';
import { keysetPage, keysetRequest } from '../http/pagination';
import { html, type Html } from '../http/html';
import { NotFound } from '../lib/errors';
import type { JobsService } from '../jobs/jobs-service';
import { consoleVisitor, facts, nextPage, notFound, sendConsolePage, table, time, type ConsoleDeps } from '../pages/console-layout';
import type { WebhooksService } from './webhooks-service';

type Decision = components['schemas']['WebhookActivity']['decisions'][number];

export interface WebhooksPagesDeps extends ConsoleDeps {
  webhooks: WebhooksService;
  jobs: JobsService;
  tenantDb: (tenantId: string) => TenantDb;
}

const query = (req: Request, name: string) => (typeof req.query[name] === 'string' && req.query[name] !== '' ? (req.query[name] as string) : undefined);
const json = (value: unknown) => (value === undefined ? '—' : JSON.stringify(value));
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
${table(['Part', 'Operator', 'Expected', 'Found', 'Result'], leaves, 'No conditions: every delivery of its events matches.')}
</section>`;
}

export function webhooksPages(deps: WebhooksPagesDeps): Router {
  const router = Router();

  router.get('/console/activity', async (req: Request, res: Response) => {
    const visitor = await consoleVisitor(deps, req, res);
    if (!visitor) return;
    const db = deps.tenantDb(visitor.principal.tenantId);
    const sourceId = query(req, 'sourceId');
    const list = `console/activity?${sourceId ?? ''}`;
    const request = keysetRequest<string>(list, { cursor: query(req, 'cursor') }, 'string');
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
    const visitor = await consoleVisitor(deps, req, res);
    if (!visitor) return;
    const db = deps.tenantDb(visitor.principal.tenantId);
    let activity: Awaited<ReturnType<WebhooksService['getActivity']>>;
    try {
      activity = await deps.webhooks.getActivity(db, req.params.activityId as string);
    } catch (err) {
      if (err instanceof NotFound) return notFound(res, visitor, '/console/activity', 'No such delivery in this tenant.');
      throw err;
    }
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
