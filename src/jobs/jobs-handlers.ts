import type { HandlerMap } from '../http/types';
import type { JobsService } from './jobs-service';

export function jobsHandlers(jobs: JobsService): HandlerMap {
  return {
    testJobTemplate: async ({ body }) => ({ status: 200, body: await jobs.testTemplate(body) }),
  };
}
