// The console's event subscriptions: endpoints that receive the tenant's run and webhook events, created
// with their signing secret shown once, deleted, and each with its deliveries (attempts, last status) and
// a redeliver button. They render what the events service returns, as the API's handlers do.
import express, { type Request, type Response, Router } from 'express';
import { keysetPage, keysetRequest } from '../http/pagination';
import { html } from '../http/html';
import { AppError } from '../lib/errors';
import { consoleAction, consoleFind, consoleVisitor, nextPage, queryParam, secretOnce, sendConsolePage, table, time, type ConsoleDeps } from '../pages/console-layout';
import { sameOriginForms } from '../pages/session-pages';
import type { EventsService, EventType } from './events-service';

export interface EventsPagesDeps extends ConsoleDeps {
  events: EventsService;
  /** Why a body is not a subscription the API would create (its schema), or null. */
  subscriptionBodyProblem(body: unknown): string | null;
  baseUrl: URL;
}

/** Every event type, in the contract's order (the record makes the compiler name a missing one). */
const EVENT_TYPES = Object.keys({
  'run.queued': true,
  'run.started': true,
  'run.succeeded': true,
  'run.failed': true,
  'run.canceled': true,
  'run.timed_out': true,
  'run.expired': true,
  'webhook.received': true,
} satisfies Record<EventType, true>) as EventType[];

type Subscription = Awaited<ReturnType<EventsService['createSubscription']>>;
type Refused = { url: string; events: string[]; error: string };

const checkedEvents = (value: unknown): string[] => (Array.isArray(value) ? value : value === undefined ? [] : [value]).map(String);

export function eventsPages(deps: EventsPagesDeps): Router {
  const router = Router();
  const sameOrigin = sameOriginForms(deps.baseUrl);
  const form = express.urlencoded({ extended: false, limit: '16kb' });

  /** The subscriptions page; with a secret to show once, or a refused form with its reason beside it. */
  async function showSubscriptions(req: Request, res: Response, shown: { created?: Subscription; refused?: Refused } = {}) {
    const visitor = await consoleVisitor(deps, req, res);
    if (!visitor) return;
    const subscriptions = await deps.events.listSubscriptions(deps.tenantDb(visitor.principal.tenantId), { limit: 100 });
    const rows = subscriptions.map((subscription) => [
      html`<a href="/console/subscriptions/${encodeURIComponent(subscription.id)}"><code>${subscription.url}</code></a>`,
      html`${subscription.events.join(', ')}`,
      html`${subscription.enabled ? 'enabled' : `disabled${subscription.disabledReason ? `: ${subscription.disabledReason}` : ''}`}`,
      html`<form method="post" action="/console/subscriptions/${encodeURIComponent(subscription.id)}/delete"><button type="submit" class="secondary" aria-label="Delete the subscription of ${subscription.url}">Delete</button></form>`,
    ]);
    const { created, refused } = shown;
    if (refused) res.status(400);
    if (created) res.set('cache-control', 'no-store');
    const checked = new Set(refused?.events ?? ['run.succeeded', 'run.failed']);
    sendConsolePage(
      res,
      visitor,
      '/console/subscriptions',
      'Event subscriptions',
      html`${created ? secretOnce({ title: `Signing secret for ${created.url}`, advice: 'Copy it now into the receiving endpoint, which verifies each event with it (Standard Webhooks): it is not shown again.', secret: created.signingSecret, also: { label: 'Endpoint', value: created.url } }) : null}
${table(['Endpoint', 'Events', 'State', ''], rows, 'No subscription yet.')}
<h2>New subscription</h2>
<form method="post" action="/console/subscriptions">
<label for="url">Endpoint URL</label><input type="text" id="url" name="url" required value="${refused?.url ?? ''}"${refused ? html` aria-invalid="true" aria-describedby="subscription-error"` : null}>
<fieldset><legend>Events</legend>${EVENT_TYPES.map((type) => html`<label><input type="checkbox" name="events" value="${type}"${checked.has(type) ? html` checked` : null}> ${type}</label>`)}</fieldset>
${refused ? html`<p id="subscription-error" class="error" role="alert">${refused.error}</p>` : null}
<button type="submit">Create</button></form>`,
    );
  }

  router.get('/console/subscriptions', (req, res) => showSubscriptions(req, res));

  router.post('/console/subscriptions', sameOrigin, form, consoleAction(deps, async (req, res, db) => {
    const body = { url: String(req.body?.url ?? ''), events: checkedEvents(req.body?.events) };
    const problem = deps.subscriptionBodyProblem(body);
    if (problem) return showSubscriptions(req, res, { refused: { ...body, error: problem } });
    try {
      const created = await deps.events.createSubscription(db, body as Parameters<EventsService['createSubscription']>[1]);
      await showSubscriptions(req, res, { created });
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      await showSubscriptions(req, res, { refused: { ...body, error: err.message } });
    }
  }));

  router.post('/console/subscriptions/:subscriptionId/delete', sameOrigin, consoleAction(deps, async (req, res, db) => {
    await deps.events.deleteSubscription(db, req.params.subscriptionId as string);
    res.redirect(303, '/console/subscriptions');
  }));

  router.get('/console/subscriptions/:subscriptionId', async (req, res) => {
    const list = `console/subscriptions/${req.params.subscriptionId}`;
    const request = keysetRequest<string>(list, { cursor: queryParam(req, 'cursor') }, 'string');
    const read = await consoleFind(deps, req, res, '/console/subscriptions', 'No such subscription in this tenant.', async (db) => {
      const subscription = await deps.events.getSubscription(db, req.params.subscriptionId as string);
      return { subscription, deliveries: await deps.events.listDeliveries(db, subscription.id, request) };
    });
    if (!read) return;
    const { visitor, found } = read;
    const { subscription } = found;
    const { page, headers } = keysetPage(req, list, found.deliveries, request, (delivery) => delivery.id);
    const at = `/console/subscriptions/${encodeURIComponent(subscription.id)}`;
    const rows = page.map((delivery) => [
      html`${delivery.eventType}`,
      html`${delivery.state}`,
      html`${delivery.attempts}`,
      html`${delivery.lastStatusCode ?? delivery.lastError ?? '—'}`,
      time(delivery.nextAttemptAt),
      time(delivery.createdAt),
      html`<form method="post" action="${at}/deliveries/${encodeURIComponent(delivery.id)}/redeliver"><button type="submit" class="secondary">Redeliver</button></form>`,
    ]);
    sendConsolePage(
      res,
      visitor,
      '/console/subscriptions',
      `Events sent to ${subscription.url}`,
      html`<p>${subscription.events.join(', ')} · ${subscription.enabled ? 'enabled' : 'disabled'}</p>
${table(['Event', 'State', 'Attempts', 'Last answer', 'Next attempt', 'Created'], rows, 'No event sent yet.')}${nextPage(headers)}`,
    );
  });

  router.post('/console/subscriptions/:subscriptionId/deliveries/:deliveryId/redeliver', sameOrigin, consoleAction(deps, async (req, res, db) => {
    await deps.events.redeliver(db, req.params.subscriptionId as string, req.params.deliveryId as string);
    res.redirect(303, `/console/subscriptions/${encodeURIComponent(req.params.subscriptionId as string)}`);
  }));

  return router;
}
