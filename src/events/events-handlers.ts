import { keysetPage, keysetRequest } from '../http/pagination';
import type { HandlerMap } from '../http/types';
import type { EventsService } from './events-service';

export function eventsHandlers(events: EventsService): HandlerMap {
  return {
    listEventSubscriptions: async ({ db, query, req }) => {
      const request = keysetRequest<string>('event-subscriptions', query, 'string');
      const { page, headers } = keysetPage(req, 'event-subscriptions', await events.listSubscriptions(db, request), request, (row) => row.id);
      return { status: 200, body: page, headers };
    },
    createEventSubscription: async ({ db, body }) => ({ status: 201, body: await events.createSubscription(db, body) }),
    getEventSubscription: async ({ db, params }) => ({ status: 200, body: await events.getSubscription(db, params.subscriptionId) }),
    updateEventSubscription: async ({ db, params, body }) => ({ status: 200, body: await events.updateSubscription(db, params.subscriptionId, body) }),
    deleteEventSubscription: async ({ db, params }) => {
      await events.deleteSubscription(db, params.subscriptionId);
      return { status: 204, body: undefined };
    },
    listEventDeliveries: async ({ db, params, query, req }) => {
      const list = `event-deliveries:${params.subscriptionId}`;
      const request = keysetRequest<string>(list, query, 'string');
      const { page, headers } = keysetPage(req, list, await events.listDeliveries(db, params.subscriptionId, request), request, (row) => row.id);
      return { status: 200, body: page, headers };
    },
    redeliverEvent: async ({ db, params }) => ({ status: 202, body: await events.redeliver(db, params.subscriptionId, params.deliveryId) }),
  };
}
