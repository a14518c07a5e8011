import { keysetPage, keysetRequest } from '../http/pagination';
import type { HandlerMap } from '../http/types';
import type { WebhooksService } from './webhooks-service';

export function webhooksHandlers(webhooks: WebhooksService): HandlerMap {
  return {
    listWebhookSources: async ({ db, query, req }) => {
      const request = keysetRequest<string>('webhook-sources', query, 'string');
      const { page, headers } = keysetPage(req, 'webhook-sources', await webhooks.listSources(db, request), request, (source) => source.id);
      return { status: 200, body: page, headers };
    },
    createWebhookSource: async ({ db, body }) => {
      const source = await webhooks.createSource(db, body);
      return { status: 201, body: source, headers: { Location: `/api/v1/webhook-sources/${source.id}` } };
    },
    getWebhookSource: async ({ db, params }) => ({ status: 200, body: await webhooks.getSource(db, params.sourceId) }),
    rotateWebhookSourceSecret: async ({ db, params, body }) => ({ status: 200, body: await webhooks.rotateSecret(db, params.sourceId, body?.signingSecret) }),
    deleteWebhookSource: async ({ db, params }) => {
      await webhooks.deleteSource(db, params.sourceId);
      return { status: 204, body: undefined };
    },
    listWebhookSourceRefusals: async ({ db, params, query, req }) => {
      const list = `webhook-sources/${params.sourceId}/refusals`;
      const request = keysetRequest<string>(list, query, 'string');
      const { page, headers } = keysetPage(req, list, await webhooks.listRefusals(db, params.sourceId, request), request, (refusal) => refusal.id);
      return { status: 200, body: page, headers };
    },
    listWebhookActivity: async ({ db, query, req }) => {
      const list = `webhook-activity?sourceId=${query.sourceId ?? ''}`;
      const request = keysetRequest<string>(list, query, 'string');
      const { page, headers } = keysetPage(req, list, await webhooks.listActivity(db, request, { sourceId: query.sourceId }), request, (activity) => activity.id);
      return { status: 200, body: page, headers };
    },
    getWebhookActivity: async ({ db, params }) => ({ status: 200, body: await webhooks.getActivity(db, params.activityId) }),
    backtestJob: async ({ db, params, body }) => ({ status: 200, body: await webhooks.backtest(db, params.jobId, body) }),
  };
}
