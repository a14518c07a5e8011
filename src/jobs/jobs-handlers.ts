import { keysetPage, keysetRequest } from '../http/pagination';
import type { HandlerMap } from '../http/types';
import type { JobsService } from './jobs-service';

export function jobsHandlers(jobs: JobsService): HandlerMap {
  return {
    listJobs: async ({ db, query, req }) => {
      const list = `jobs?enabled=${query.enabled ?? ''}`;
      const request = keysetRequest<string>(list, query, 'string');
      const { page, headers } = keysetPage(req, list, await jobs.list(db, request, { enabled: query.enabled }), request, (job) => job.id);
      return { status: 200, body: page, headers };
    },
    createJob: async ({ db, body }) => {
      const job = await jobs.create(db, body);
      return { status: 201, body: job, headers: { Location: `/api/v1/jobs/${job.id}` } };
    },
    getJob: async ({ db, params }) => ({ status: 200, body: await jobs.get(db, params.jobId) }),
    updateJob: async ({ db, params, body }) => ({ status: 200, body: await jobs.update(db, params.jobId, body) }),
    deleteJob: async ({ db, params }) => {
      await jobs.delete(db, params.jobId);
      return { status: 204, body: undefined };
    },
    enableJob: async ({ db, params }) => ({ status: 200, body: await jobs.setEnabled(db, params.jobId, true) }),
    disableJob: async ({ db, params }) => ({ status: 200, body: await jobs.setEnabled(db, params.jobId, false) }),
    testJobTemplate: async ({ db, body }) => ({ status: 200, body: await jobs.testTemplate(db, body) }),
  };
}
