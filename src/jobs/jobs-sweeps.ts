// The jobs' reads across tenants, the one file of src/jobs given the raw client.
import type { Db } from '../db/client';

/** A trigger acts when it and its job are enabled and the job is not deleted (the catalog's rule, in a query). */
export const LIVE_TRIGGER = { enabled: true, job: { enabled: true, deletedAt: null } } as const;

export const jobsSweeps = (db: Db) => ({
  /** Jobs with an enabled invocation trigger (the input schemas checked at start), newest first. */
  invocableJobs: () =>
    db.job.findMany({
      where: { deletedAt: null, triggers: { some: { type: 'invocation', enabled: true } } },
      include: { triggers: { orderBy: { position: 'asc' } } },
      orderBy: { updatedAt: 'desc' },
      take: 1000,
    }),

  /** Every schedule trigger that acts, with its job. */
  scheduleTriggers: async () =>
    (await db.trigger.findMany({ where: { type: 'schedule', ...LIVE_TRIGGER }, include: { job: true } })).map((trigger) => ({
      tenantId: trigger.tenantId,
      id: trigger.id,
      config: trigger.config,
      job: trigger.job,
    })),
});
