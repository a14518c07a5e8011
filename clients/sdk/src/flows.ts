// `createFlows`: one openapi-fetch client with authentication and network-error middleware, and thin
// typed wrappers that answer data or throw FlowsApiError.
import createClient from 'openapi-fetch';
import type { Flows, FlowsOptions } from './api';
import { refreshingAuth, staticAuth } from './auth';
import { networkErrors } from './errors';
import type { paths } from './generated/openapi';
import { collect, paginate } from './pagination';
import { unwrap } from './results';
import { runsOf } from './runs';

export function createFlows({ baseUrl, accessToken, refresh, fetch = globalThis.fetch }: FlowsOptions): Flows {
  const origin = baseUrl.replace(/\/+$/, '');
  const client = createClient<paths>({ baseUrl: origin, fetch });
  if (refresh) client.use(refreshingAuth(origin, fetch, refresh));
  else if (accessToken !== undefined) client.use(staticAuth(accessToken));
  client.use(networkErrors);

  const job = (jobId: string) => ({ path: { jobId } });

  return {
    client,
    me: async () => unwrap(await client.GET('/api/v1/me')),
    jobs: {
      list: (query = {}) => paginate((page) => client.GET('/api/v1/jobs', { params: { query: { ...query, ...page } } })),
      get: async (ref) => unwrap(await client.GET('/api/v1/jobs/{jobId}', { params: job(ref) })),
      create: async (body) => unwrap(await client.POST('/api/v1/jobs', { body })),
      update: async (ref, patch) => unwrap(await client.PATCH('/api/v1/jobs/{jobId}', { params: job(ref), body: patch })),
      delete: async (ref) => {
        unwrap(await client.DELETE('/api/v1/jobs/{jobId}', { params: job(ref) }));
      },
      enable: async (ref) => unwrap(await client.POST('/api/v1/jobs/{jobId}/enable', { params: job(ref) })),
      disable: async (ref) => unwrap(await client.POST('/api/v1/jobs/{jobId}/disable', { params: job(ref) })),
      invoke: async (ref, body = {}) => unwrap(await client.POST('/api/v1/jobs/{jobId}/invocations', { params: job(ref), body })),
    },
    runs: runsOf(client),
    usage: async (query = {}) => unwrap(await client.GET('/api/v1/usage', { params: { query } })),
    budget: {
      get: async () => unwrap(await client.GET('/api/v1/budget')),
      set: async (monthlyUsd) => unwrap(await client.PUT('/api/v1/budget', { body: { monthlyUsd } })),
    },
    conditions: {
      test: async (body) => unwrap(await client.POST('/api/v1/job-conditions/test', { body })),
    },
    templates: {
      test: async (body) => unwrap(await client.POST('/api/v1/job-templates/test', { body })),
    },
    activity: {
      list: (query = {}) => paginate((page) => client.GET('/api/v1/webhook-activity', { params: { query: { ...query, ...page } } })),
      get: async (id) => unwrap(await client.GET('/api/v1/webhook-activity/{activityId}', { params: { path: { activityId: id } } })),
    },
    sources: {
      list: () => collect(paginate((page) => client.GET('/api/v1/webhook-sources', { params: { query: page } }))),
      create: async (body) => unwrap(await client.POST('/api/v1/webhook-sources', { body })),
      rotate: async (id, signingSecret) => unwrap(await client.POST('/api/v1/webhook-sources/{sourceId}/rotate-secret', { params: { path: { sourceId: id } }, ...(signingSecret !== undefined && { body: { signingSecret } }) })),
      refusals: (id, query = {}) => paginate((page) => client.GET('/api/v1/webhook-sources/{sourceId}/refusals', { params: { path: { sourceId: id }, query: { ...query, ...page } } })),
    },
  };
}
