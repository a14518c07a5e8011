// The console's integrations: execution targets (created, changed, deleted; a docker target checked end to
// end), VM-host connections (created, their token rotated, deleted, diagnosed step by step) and the agent
// integration. Tokens are written, never shown. They render what the integrations services return, as the
// API's handlers do.
import express, { type Request, type Response, Router } from 'express';
import type { components } from '../../generated/openapi';
import type { OperationId } from '../http/types';
import { html, type Html } from '../http/html';
import { AppError, NotFound } from '../lib/errors';
import { consoleAction, consoleFind, consoleVisitor, facts, field, formError, sendConsolePage, table, time, type ConsoleDeps } from '../pages/console-layout';
import { sameOriginForms } from '../pages/session-pages';
import type { ConnectionsService } from './connections-service';
import type { DiagnosticsService } from './diagnostics-service';
import { LOCAL_TARGET_ID, type TargetsService } from './targets-service';

type Diagnostics = components['schemas']['VmhostDiagnostics'] | components['schemas']['DockerDiagnostics'];
type Connection = components['schemas']['VmhostConnection'];
type Form = Record<string, string>;

export interface IntegrationsPagesDeps extends ConsoleDeps {
  targets: TargetsService;
  connections: ConnectionsService;
  diagnostics: DiagnosticsService;
  /** Why a body is not one the API's operation would take (its schema), or null. */
  bodyProblem(operationId: OperationId, body: unknown): string | null;
  baseUrl: URL;
}

/** The form fields of a target, each with how it is sent: as text, or as a number. */
const TARGET_FIELDS = { name: 'text', kind: 'text', connectionId: 'text', image: 'text', size: 'text', region: 'text', command: 'text', cpus: 'number', memoryMb: 'number', pids: 'number', network: 'text', timeoutSeconds: 'number' } as const;
const DOCKER_ONLY = ['command', 'cpus', 'memoryMb', 'pids', 'network'];
const VMHOST_ONLY = ['connectionId', 'size', 'region'];

/**
 * A body from a form: the fields named, trimmed, those left empty omitted (`nulled` ones sent as null, to go
 * back to a default); numbers sent as numbers when they read as one (else as typed, for the schema to refuse).
 */
function bodyOf(form: Form, fields: Record<string, 'text' | 'number'>, nulled: string[] = []): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [name, kind] of Object.entries(fields)) {
    const value = typeof form[name] === 'string' ? form[name].trim() : '';
    if (value === '') {
      if (nulled.includes(name)) body[name] = null;
      continue;
    }
    body[name] = kind === 'number' && Number.isFinite(Number(value)) ? Number(value) : value;
  }
  return body;
}

/** The text of a form's fields, to show them again after a refusal. */
const textOf = (form: Form | undefined): Form => Object.fromEntries(Object.entries(form ?? {}).filter(([, value]) => typeof value === 'string'));

/** A diagnosis, step by step: what each found or why it failed, and how long it took. */
const diagnosisTable = (diagnosis: Diagnostics): Html =>
  html`<section aria-labelledby="diagnosis"><h2 id="diagnosis">Diagnostics: ${diagnosis.ok ? 'every step passed' : 'a step failed'}</h2>
${table(['Step', 'Outcome', 'Took', 'Detail'], diagnosis.steps.map((step) => [html`<code>${step.step}</code>`, html`<strong class="${step.ok ? 'ok' : 'error'}">${step.ok ? 'passed' : 'failed'}</strong>`, html`${step.durationMs === undefined ? '' : `${step.durationMs} ms`}`, html`${step.detail}`]), 'No step ran.')}</section>`;

/**
 * A call the schema has already judged (`problem`): made when it passed, its refusal (4xx) returned as the
 * form's error; anything else is the server's.
 */
async function attempt<T>(problem: string | null, call: () => Promise<T>): Promise<{ value: T; error?: undefined } | { value?: undefined; error: string }> {
  if (problem) return { error: problem };
  try {
    return { value: await call() };
  } catch (err) {
    if (err instanceof AppError && err.status < 500) return { error: err.message };
    throw err;
  }
}

export function integrationsPages(deps: IntegrationsPagesDeps): Router {
  const router = Router();
  const sameOrigin = sameOriginForms(deps.baseUrl);
  const form = express.urlencoded({ extended: false, limit: '16kb' });
  const connectionOptions = (connections: Connection[]) => connections.map((connection) => ({ value: connection.id, label: connection.name }));

  /** A target's fields, for a new one (with its kind) or one being changed (its kind fixed). */
  function targetFields(values: Form, connections: Connection[], kind: string | null): Html {
    const docker = (kind ?? values.kind) === 'docker';
    const show = (name: string) => kind === null || (docker ? !VMHOST_ONLY.includes(name) : !DOCKER_ONLY.includes(name));
    const optional = (name: string, label: string, hint?: string) => (show(name) ? field({ name, label, value: values[name], optional: true, hint }) : null);
    return html`${kind === null ? field({ name: 'kind', label: 'Kind', value: values.kind ?? 'vmhost', options: [{ value: 'vmhost', label: 'vmhost: a disposable VM per run' }, { value: 'docker', label: 'docker: a fresh container per run' }] }) : null}
${field({ name: 'name', label: 'Name', value: values.name })}
${field({ name: 'image', label: 'Image', value: values.image, hint: 'The VM image with the agent installed, or the container image the operator allows.' })}
${show('connectionId') ? field({ name: 'connectionId', label: 'VM-host connection (vmhost)', value: values.connectionId, options: connectionOptions(connections), optional: true }) : null}
${optional('size', 'VM size (vmhost)', 'Empty: the provider\u2019s default.')}
${optional('region', 'Region (vmhost)', 'Empty: the provider\u2019s default.')}
${optional('command', 'Command (docker)', 'Run by /bin/sh -c in place of the entrypoint. Empty: the image\u2019s own.')}
${optional('cpus', 'CPUs (docker)')}
${optional('memoryMb', 'Memory in MiB (docker)')}
${optional('pids', 'Most processes at once (docker)')}
${show('network') ? field({ name: 'network', label: 'Network (docker)', value: values.network ?? 'none', options: [{ value: 'none', label: 'none: loopback only' }, { value: 'egress', label: 'egress: the public internet, through Flows\u2019s proxy' }] }) : null}
${optional('timeoutSeconds', 'Time limit in seconds', 'A run still active after it ends as timed_out. Empty: one hour on creation.')}`;
  }

  // --- Execution targets ---

  async function showTargets(req: Request, res: Response, refused?: { form: Form; error: string }) {
    const visitor = await consoleVisitor(deps, req, res);
    if (!visitor) return;
    const db = deps.tenantDb(visitor.principal.tenantId);
    const [targets, connections] = await Promise.all([deps.targets.list(db, { limit: 100 }), deps.connections.list(db)]);
    const connectionName = new Map(connections.map((connection) => [connection.id, connection.name]));
    const rows = targets.map((target) => [
      target.id === LOCAL_TARGET_ID ? html`${target.name}` : html`<a href="/console/targets/${encodeURIComponent(target.id)}">${target.name}</a>`,
      html`${target.kind}`,
      html`${target.kind === 'vmhost' ? `${target.image} on ${connectionName.get(target.connectionId ?? '') ?? target.connectionId}` : target.kind === 'docker' ? target.image : 'the operator\u2019s agent command'}`,
      html`${target.timeoutSeconds} s`,
      html`<code>${target.id}</code>`,
    ]);
    if (refused) res.status(400);
    sendConsolePage(
      res,
      visitor,
      '/console/targets',
      'Execution targets',
      html`<p>Where runs execute. A job names its target by id; the local target is the operator\u2019s.</p>
${table(['Name', 'Kind', 'Runs on', 'Time limit', 'Id'], rows, 'No execution target yet.')}
<h2>New target</h2>
<form method="post" action="/console/targets">
${targetFields(refused?.form ?? {}, connections, null)}
${formError(refused?.error)}
<button type="submit">Create</button></form>`,
    );
  }

  router.get('/console/targets', (req, res) => showTargets(req, res));

  router.post('/console/targets', sameOrigin, form, consoleAction(deps, async (req, res, db) => {
    const sent = textOf(req.body);
    const docker = sent.kind === 'docker';
    const body = bodyOf(sent, TARGET_FIELDS);
    // The form shows every field; those of the other kind are not sent.
    for (const name of docker ? VMHOST_ONLY : DOCKER_ONLY) delete body[name];
    const { value: created, error } = await attempt(deps.bodyProblem('createExecutionTarget', body), () => deps.targets.create(db, body as never));
    if (error !== undefined) return showTargets(req, res, { form: sent, error });
    res.redirect(303, `/console/targets/${encodeURIComponent(created.id)}`);
  }));

  /** A target's page: its settings as a form to change them, docker diagnostics, delete. */
  async function showTarget(req: Request, res: Response, shown: { refused?: { form: Form; error: string }; diagnosis?: Diagnostics; error?: string } = {}) {
    const read = await consoleFind(deps, req, res, '/console/targets', 'No such execution target in this tenant.', async (db) => {
      const target = await deps.targets.get(db, req.params.targetId as string);
      if (target.id === LOCAL_TARGET_ID) throw new NotFound();
      return { target, connections: await deps.connections.list(db) };
    });
    if (!read) return;
    const { visitor, found: { target, connections } } = read;
    const at = `/console/targets/${encodeURIComponent(target.id)}`;
    const saved: Form = {
      name: target.name,
      image: target.image ?? '',
      connectionId: target.connectionId ?? '',
      size: target.size,
      region: target.region ?? '',
      command: target.docker?.command ?? '',
      cpus: String(target.docker?.cpus ?? ''),
      memoryMb: String(target.docker?.memoryMb ?? ''),
      pids: String(target.docker?.pids ?? ''),
      network: target.docker?.network ?? 'none',
      timeoutSeconds: String(target.timeoutSeconds),
    };
    if (shown.refused || shown.error) res.status(400);
    sendConsolePage(
      res,
      visitor,
      '/console/targets',
      target.name,
      html`${facts([['Id', html`<code>${target.id}</code>`], ['Kind', html`${target.kind}`], ['Created', time(target.createdAt)], ['Changed', time(target.updatedAt)]])}
${target.kind === 'docker'
  ? html`<form method="post" action="${at}/diagnostics"><button type="submit" class="secondary">Run diagnostics</button></form>`
  : html`<p>A vmhost target is checked through its connection: <a href="/console/connections/${encodeURIComponent(target.connectionId ?? '')}">run its diagnostics</a>.</p>`}
${shown.diagnosis ? diagnosisTable(shown.diagnosis) : formError(shown.error)}
<h2>Settings</h2>
<form method="post" action="${at}">
${targetFields(shown.refused?.form ?? saved, connections, target.kind)}
${formError(shown.refused?.error)}
<button type="submit">Save</button></form>
<p>Runs already started keep the settings they started with.</p>
<h2>Delete</h2>
<form method="post" action="${at}/delete"><button type="submit" class="secondary">Delete ${target.name}</button></form>
<p>A target a job runs on cannot be deleted; move the job first.</p>`,
    );
  }

  router.get('/console/targets/:targetId', (req, res) => showTarget(req, res));

  router.post('/console/targets/:targetId', sameOrigin, form, consoleAction(deps, async (req, res, db) => {
    const sent = textOf(req.body);
    // Only the fields of its kind are on the form; emptied optional ones go back to their default.
    const fields = Object.fromEntries(Object.entries(TARGET_FIELDS).filter(([name]) => name !== 'kind' && name in sent));
    const body = bodyOf(sent, fields, ['region', 'command'].filter((name) => name in fields));
    const { error } = await attempt(deps.bodyProblem('updateExecutionTarget', body), () => deps.targets.update(db, req.params.targetId as string, body as never));
    if (error !== undefined) return showTarget(req, res, { refused: { form: sent, error } });
    res.redirect(303, `/console/targets/${encodeURIComponent(req.params.targetId as string)}`);
  }));

  router.post('/console/targets/:targetId/diagnostics', sameOrigin, consoleAction(deps, async (req, res, db) => {
    const { value: diagnosis, error } = await attempt(null, () => deps.targets.diagnose(db, req.params.targetId as string));
    await showTarget(req, res, { diagnosis, error });
  }));

  router.post('/console/targets/:targetId/delete', sameOrigin, consoleAction(deps, async (req, res, db) => {
    await deps.targets.delete(db, req.params.targetId as string);
    res.redirect(303, '/console/targets');
  }));

  // --- VM-host connections and the agent integration ---

  const CONNECTION_FIELDS = { name: 'text', apiBaseUrl: 'text', apiToken: 'text' } as const;
  const INTEGRATION_FIELDS = { project: 'text', apiBaseUrl: 'text', accessToken: 'text', connectionId: 'text' } as const;

  async function showConnections(req: Request, res: Response, refused: { connection?: { form: Form; error: string }; integration?: { form: Form; error: string } } = {}) {
    const visitor = await consoleVisitor(deps, req, res);
    if (!visitor) return;
    const db = deps.tenantDb(visitor.principal.tenantId);
    const [connections, integration] = await Promise.all([deps.connections.list(db), deps.connections.getIntegration(db).catch((err) => (err instanceof NotFound ? null : Promise.reject(err)))]);
    const rows = connections.map((connection) => [
      html`<a href="/console/connections/${encodeURIComponent(connection.id)}">${connection.name}</a>`,
      html`<code>${connection.apiBaseUrl}</code>`,
      connection.lastVerifiedAt ? time(connection.lastVerifiedAt) : html`never`,
    ]);
    const integrationForm = refused.integration?.form ?? (integration ? { project: integration.project, apiBaseUrl: integration.apiBaseUrl, connectionId: integration.connectionId ?? '' } : {});
    if (refused.connection || refused.integration) res.status(400);
    sendConsolePage(
      res,
      visitor,
      '/console/connections',
      'VM hosts and the agent',
      html`<p>A VM-host connection boots the VMs of vmhost targets; the agent integration is the coding-agent provider those VMs\u2019 agents use. Tokens are stored encrypted and never shown again.</p>
${table(['Connection', 'API', 'Diagnostics last passed'], rows, 'No VM-host connection yet.')}
<h2>New connection</h2>
<form method="post" action="/console/connections">
${field({ name: 'name', label: 'Name', value: refused.connection?.form.name })}
${field({ name: 'apiBaseUrl', label: 'API base URL', value: refused.connection?.form.apiBaseUrl, hint: 'For example https://api.vmhost.example.com/v2' })}
${field({ name: 'apiToken', label: 'API token', type: 'password' })}
${formError(refused.connection?.error)}
<button type="submit">Create</button></form>
<h2>Agent integration</h2>
${integration
  ? html`${facts([['Project', html`${integration.project}`], ['API', html`<code>${integration.apiBaseUrl}</code>`], ['Saved', time(integration.updatedAt)]])}
<form method="post" action="/console/integration/delete"><button type="submit" class="secondary">Remove the integration</button></form>`
  : html`<p>None saved: runs on vmhost targets cannot reach an agent provider.</p>`}
<form method="post" action="/console/integration">
${field({ form: 'integration', name: 'project', label: 'Project', value: integrationForm.project })}
${field({ form: 'integration', name: 'apiBaseUrl', label: 'Agent provider API base URL', value: integrationForm.apiBaseUrl })}
${field({ form: 'integration', name: 'accessToken', label: 'Access token', type: 'password', hint: integration ? 'Saving replaces the integration: give the token again.' : undefined })}
${field({ form: 'integration', name: 'connectionId', label: 'VM-host connection', value: integrationForm.connectionId, options: connectionOptions(connections), optional: true })}
${formError(refused.integration?.error)}
<button type="submit">Save the integration</button></form>`,
    );
  }

  router.get('/console/connections', (req, res) => showConnections(req, res));

  router.post('/console/connections', sameOrigin, form, consoleAction(deps, async (req, res, db) => {
    const sent = textOf(req.body);
    const body = bodyOf(sent, CONNECTION_FIELDS);
    const { value: created, error } = await attempt(deps.bodyProblem('createVmhostConnection', body), () => deps.connections.create(db, body as never));
    if (error !== undefined) return showConnections(req, res, { connection: { form: sent, error } });
    res.redirect(303, `/console/connections/${encodeURIComponent(created.id)}`);
  }));

  router.post('/console/integration', sameOrigin, form, consoleAction(deps, async (req, res, db) => {
    const sent = textOf(req.body);
    const body = bodyOf(sent, INTEGRATION_FIELDS);
    const { error } = await attempt(deps.bodyProblem('putAgentIntegration', body), () => deps.connections.saveIntegration(db, body as never));
    if (error !== undefined) return showConnections(req, res, { integration: { form: sent, error } });
    res.redirect(303, '/console/connections');
  }));

  router.post('/console/integration/delete', sameOrigin, consoleAction(deps, async (_req, res, db) => {
    await deps.connections.deleteIntegration(db);
    res.redirect(303, '/console/connections');
  }));

  /** A connection's page: diagnostics run from it, its name, URL and token changed, delete. */
  async function showConnection(req: Request, res: Response, shown: { diagnosis?: Diagnostics; refused?: { form: Form; error: string } } = {}) {
    const read = await consoleFind(deps, req, res, '/console/connections', 'No such VM-host connection in this tenant.', (db) => deps.connections.get(db, req.params.connectionId as string));
    if (!read) return;
    const { visitor, found: connection } = read;
    const at = `/console/connections/${encodeURIComponent(connection.id)}`;
    const values = shown.refused?.form ?? { name: connection.name, apiBaseUrl: connection.apiBaseUrl };
    if (shown.refused) res.status(400);
    sendConsolePage(
      res,
      visitor,
      '/console/connections',
      connection.name,
      html`${facts([['Id', html`<code>${connection.id}</code>`], ['API', html`<code>${connection.apiBaseUrl}</code>`], ['Diagnostics last passed', connection.lastVerifiedAt ? time(connection.lastVerifiedAt) : html`never`], ['Created', time(connection.createdAt)]])}
<form method="post" action="${at}/diagnostics"><button type="submit">Run diagnostics</button></form>
<p>Diagnostics check the token\u2019s permissions, boot a disposable VM with the image of a target on this connection, reach the model from its agent, and destroy the VM.</p>
${shown.diagnosis ? diagnosisTable(shown.diagnosis) : null}
<h2>Settings</h2>
<form method="post" action="${at}">
${field({ name: 'name', label: 'Name', value: values.name })}
${field({ name: 'apiBaseUrl', label: 'API base URL', value: values.apiBaseUrl })}
${field({ name: 'apiToken', label: 'New API token', type: 'password', optional: true, hint: 'Empty: the stored token stays.' })}
${formError(shown.refused?.error)}
<button type="submit">Save</button></form>
<h2>Delete</h2>
<form method="post" action="${at}/delete"><button type="submit" class="secondary">Delete ${connection.name}</button></form>
<p>A connection a target or the agent integration uses cannot be deleted.</p>`,
    );
  }

  router.get('/console/connections/:connectionId', (req, res) => showConnection(req, res));

  router.post('/console/connections/:connectionId', sameOrigin, form, consoleAction(deps, async (req, res, db) => {
    const sent = textOf(req.body);
    const body = bodyOf(sent, CONNECTION_FIELDS);
    const { error } = await attempt(deps.bodyProblem('updateVmhostConnection', body), () => deps.connections.update(db, req.params.connectionId as string, body as never));
    if (error !== undefined) return showConnection(req, res, { refused: { form: sent, error } });
    res.redirect(303, `/console/connections/${encodeURIComponent(req.params.connectionId as string)}`);
  }));

  router.post('/console/connections/:connectionId/diagnostics', sameOrigin, consoleAction(deps, async (req, res, db) => {
    const diagnosis = await deps.diagnostics.run(db, req.params.connectionId as string);
    await showConnection(req, res, { diagnosis });
  }));

  router.post('/console/connections/:connectionId/delete', sameOrigin, consoleAction(deps, async (req, res, db) => {
    await deps.connections.delete(db, req.params.connectionId as string);
    res.redirect(303, '/console/connections');
  }));

  return router;
}
