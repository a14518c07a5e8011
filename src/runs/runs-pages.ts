// The console's run pages: the tenant's runs (by job and state), and one run with its prompt, outcome,
// cause and trace. They render what the runs service returns, as the API's handlers do.
import { type Request, type Response, Router } from 'express';
import type { components } from '../../generated/openapi';
import type { TenantDb } from '../db/tenant-scope';
import { keysetPage, keysetRequest } from '../http/pagination';
import { html, type Html } from '../http/html';
import { runLink } from '../jobs/jobs-pages';
import { consoleAction, consoleFind, consoleVisitor, facts, nextPage, queryParam, sendConsolePage, table, time, type ConsoleDeps } from '../pages/console-layout';
import { sameOriginForms } from '../pages/session-pages';
import { isStoppable, isTerminal, RUN_STATES, type RunState } from './engine/lifecycle';
import { invocationOf } from './runs-handlers';
import { TRACE_COLUMNS, traceCells, traceRows, usageText } from './trace-view';
import type { JobsService } from '../jobs/jobs-service';
import type { RunsService } from './runs-service';

export interface RunsPagesDeps extends ConsoleDeps {
  runs: RunsService;
  jobs: JobsService;
  baseUrl: URL;
}

type RunView = components['schemas']['Run'];

const TRACE_PAGE = 200;
/** A link to a run's job, by the job's name while it lives (the tenant's live jobs are kept in memory). */
async function jobLinks(deps: RunsPagesDeps, db: TenantDb) {
  const live = await deps.jobs.live(db);
  return (jobId: string): Html => html`<a href="/console/jobs/${encodeURIComponent(jobId)}">${live.find(jobId)?.name ?? jobId}</a>`;
}


/** Stop while the run may be stopped; replay once it has finished. */
function actions(run: { id: string; state: RunState }): Html | null {
  const at = `/console/runs/${encodeURIComponent(run.id)}`;
  if (isStoppable(run.state)) return html`<form method="post" action="${at}/stop"><button type="submit">Stop</button></form>`;
  if (isTerminal(run.state)) return html`<form method="post" action="${at}/replay"><button type="submit" class="secondary">Replay</button></form>`;
  return null;
}

/** What started a run, linked: the delivery, the schedule's slot or the run that ended, or the invocation. */
function causeText({ trigger, invocationId }: RunView): Html {
  if (trigger.activityId) return html`the webhook delivery <a href="/console/activity/${encodeURIComponent(trigger.activityId)}">${trigger.activityId}</a>`;
  if (trigger.scheduledFor) return html`the schedule, for its slot at ${time(trigger.scheduledFor)}`;
  if (trigger.runId) return html`the end of run <a href="/console/runs/${encodeURIComponent(trigger.runId)}">${trigger.runId}</a>`;
  return html`${trigger.type === 'invocation' ? html`an invocation${invocationId ? html` (<code>${invocationId}</code>)` : null}` : trigger.type}`;
}

/** Most trace rows a turn of the run page's live script reads (the repository reads one more, to tell whether more follow). */
const LIVE_ROWS = 100;

/** Where a run with a repository workspace started, and what became of its changes. */
function artifactsView(runId: string, artifacts: NonNullable<RunView['artifacts']>): Html {
  const started = html`<code>${artifacts.repository}</code> at <code>${artifacts.baseRef}</code> (<code>${artifacts.baseCommit.slice(0, 7)}</code>)`;
  if (!artifacts.changed) return html`${started}; no file changed`;
  const stat = artifacts.diffStat ? html`${artifacts.diffStat.files} file${artifacts.diffStat.files === 1 ? '' : 's'}, +${artifacts.diffStat.insertions} −${artifacts.diffStat.deletions}` : null;
  return html`${started}; ${stat} on <code>${artifacts.branch}</code>${artifacts.pushed ? ', pushed' : ', not pushed'}${
    artifacts.pullRequestUrl ? html` · <a href="${artifacts.pullRequestUrl}">pull request</a>` : null
  } · <a href="/console/runs/${encodeURIComponent(runId)}/patch">patch</a>${artifacts.error ? html`<br><span class="error">${artifacts.error}</span>` : null}`;
}

export function runsPages(deps: RunsPagesDeps): Router {
  const router = Router();
  const sameOrigin = sameOriginForms(deps.baseUrl);

  router.get('/console/runs', async (req: Request, res: Response) => {
    const visitor = await consoleVisitor(deps, req, res);
    if (!visitor) return;
    const stateAsked = queryParam(req, 'state');
    const filter = { jobId: queryParam(req, 'jobId'), state: (RUN_STATES as readonly string[]).includes(stateAsked ?? '') ? (stateAsked as RunState) : undefined };
    const list = `console/runs?${filter.jobId ?? ''}&${filter.state ?? ''}`;
    const request = keysetRequest<string>(list, { cursor: queryParam(req, 'cursor') }, 'string');
    const db = deps.tenantDb(visitor.principal.tenantId);
    const { page, headers } = keysetPage(req, list, await deps.runs.list(db, request, filter), request, (run) => run.id);
    const jobLink = await jobLinks(deps, db);
    const rows = page.map((run) => [runLink(run), jobLink(run.jobId), html`${run.state}`, html`${run.trigger.type}`, time(run.createdAt)]);
    sendConsolePage(
      res,
      visitor,
      '/console/runs',
      'Runs',
      html`<form method="get" action="/console/runs" class="filters">
<div><label for="jobId">Job (id or slug)</label><input type="text" id="jobId" name="jobId" value="${filter.jobId ?? ''}"></div>
<div><label for="state">State</label><select id="state" name="state"><option value="">any</option>${RUN_STATES.map((state) => html`<option${state === filter.state ? html` selected` : null}>${state}</option>`)}</select></div>
<button type="submit">Filter</button></form>
${table(['Run', 'Job', 'State', 'Started by', 'Created'], rows, 'No run matches.')}${nextPage(headers)}`,
    );
  });

  router.get('/console/runs/:runId', async (req: Request, res: Response) => {
    const list = `console/runs/${req.params.runId}/trace`;
    const request = keysetRequest<number>(list, { limit: TRACE_PAGE, cursor: queryParam(req, 'cursor') }, 'number');
    const read = await consoleFind(deps, req, res, '/console/runs', 'No such run in this tenant.', async (db) => {
      const run = await deps.runs.get(db, req.params.runId as string);
      return { run, trace: await deps.runs.trace(db, run.id, request) };
    });
    if (!read) return;
    const { visitor, db, found: { run, trace } } = read;
    const { page, headers } = keysetPage(req, list, trace, request, (event) => event.seq);
    // The last page of an unfinished run's trace grows in place.
    const live = !isTerminal(run.state) && !headers.Link;
    const jobLink = await jobLinks(deps, db);
    const details: [string, Html][] = [
      ['Job', jobLink(run.jobId)],
      ['State', html`<strong id="run-state">${run.state}</strong>${actions(run)}`],
      ...(run.attempt > 1 ? [['Attempt', html`${run.attempt} (the job's retry policy tried it again; the trace marks each attempt)`] as [string, Html]] : []),
      ['Started by', html`${causeText(run)}${run.trigger.id ? html` (trigger <code>${run.trigger.id}</code>)` : null}${run.replayOf ? html`, replaying <a href="/console/runs/${encodeURIComponent(run.replayOf)}">${run.replayOf}</a>` : null}`],
      ['Created', time(run.createdAt)],
      ['Started', time(run.startedAt)],
      ['Finished', time(run.finishedAt)],
      ...(run.usage ? [['Usage', html`${usageText(run.usage)}`] as [string, Html]] : []),
      ...(run.artifacts ? [['Repository', artifactsView(run.id, run.artifacts)] as [string, Html]] : []),
    ];
    sendConsolePage(
      res,
      visitor,
      '/console/runs',
      run.name,
      html`${facts(details)}
${run.error ? html`<h2>Error</h2><p class="error">${run.error}</p>` : null}
${run.result ? html`<h2>Result</h2><pre>${JSON.stringify(run.result, null, 2)}</pre>` : null}
<h2>Prompt</h2><pre>${run.prompt}</pre>
<h2>Trace</h2>
${table(TRACE_COLUMNS, page.map(traceCells), 'Nothing traced yet.', live ? html` id="trace" data-run="${run.id}" data-after="${page.at(-1)?.seq ?? request.after ?? 0}"` : undefined)}${nextPage(headers)}
${live ? html`<script src="/console/live-run.js" defer></script>` : null}`,
    );
  });

  // The run's changes as a patch, for the page's link (the API has its own: GET /api/v1/runs/{runId}/patch).
  router.get('/console/runs/:runId/patch', async (req: Request, res: Response) => {
    const read = await consoleFind(deps, req, res, '/console/runs', 'This run has no patch.', (db) => deps.runs.patch(db, req.params.runId as string));
    if (!read) return;
    res.type('text/x-diff; charset=utf-8').setHeader('content-disposition', `attachment; filename="${req.params.runId}.patch"`);
    res.send(read.found);
  });

  // What the run page's live script appends: rows rendered as the page's own, in a table body saying the run's state.
  router.get('/console/runs/:runId/trace-rows', async (req: Request, res: Response) => {
    const after = Number(queryParam(req, 'after') ?? 0);
    if (!Number.isSafeInteger(after) || after < 0) return void res.status(400).type('text').send('`after` must be a whole number.');
    const read = await consoleFind(deps, req, res, '/console/runs', 'No such run in this tenant.', async (db) => {
      const run = await deps.runs.get(db, req.params.runId as string);
      return { run, events: await deps.runs.trace(db, run.id, { limit: LIVE_ROWS, after }) };
    });
    if (!read) return;
    const { run, events } = read.found;
    const rows = events.slice(0, LIVE_ROWS);
    res.type('html').set('cache-control', 'no-store').send(
      html`<table><tbody data-state="${run.state}" data-after="${rows.at(-1)?.seq ?? after}" data-ended="${String(isTerminal(run.state))}" data-more="${String(events.length > LIVE_ROWS)}">${traceRows(rows)}</tbody></table>`.value,
    );
  });

  router.post('/console/runs/:runId/stop', sameOrigin, consoleAction(deps, async (req, res, db) => {
    const run = await deps.runs.stop(db, req.params.runId as string);
    res.redirect(303, `/console/runs/${encodeURIComponent(run.id)}`);
  }));

  router.post('/console/runs/:runId/replay', sameOrigin, consoleAction(deps, async (req, res, db) => {
    const { runId } = invocationOf(await deps.runs.replay(db, req.params.runId as string));
    res.redirect(303, `/console/runs/${encodeURIComponent(runId)}`);
  }));

  return router;
}
