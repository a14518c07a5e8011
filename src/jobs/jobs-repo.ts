// Jobs and their triggers in the database, through the tenant-bound client. Deleted jobs stay as rows
// (their finished runs remain readable) and are invisible here.
import { Prisma } from '../../generated/prisma/sqlite/client';
import type { TenantDb } from '../db/tenant-scope';
import type { KeysetRequest } from '../http/pagination';
import type { Trigger } from './jobs-fns';

const withTriggers = { triggers: { orderBy: { position: 'asc' } } } as const;

export type JobRow = Prisma.JobGetPayload<{ include: typeof withTriggers }>;

/** Settings of a job as columns; triggers are written separately. */
export interface JobFields {
  name?: string;
  slug?: string;
  promptTemplate?: string;
  executionTargetId?: string | null;
  runNameTemplate?: string | null;
  concurrencyLimit?: number;
  model?: string | null;
  effort?: string | null;
  env?: Prisma.InputJsonValue;
  flowControl?: Prisma.InputJsonValue;
  /** The job's network allowlist; null removes it. */
  network?: Prisma.InputJsonValue | null;
  /** The coding agent that runs the prompt (`JobAgent`). */
  agent?: Prisma.InputJsonValue;
  /** The repository its runs work on (`JobWorkspace`); null removes it. */
  workspace?: Prisma.InputJsonValue | null;
  /** How its runs report where the work was asked (`JobReport`); null removes it. */
  report?: Prisma.InputJsonValue | null;
}

/** A trigger as a row: what intake looks up by (source, watched job) is lifted out of `config`. */
function triggerRow(trigger: Trigger, position: number) {
  const { id, enabled, type, ...config } = trigger;
  return {
    id,
    enabled,
    type,
    position,
    config: config as Prisma.InputJsonValue,
    sourceId: trigger.type === 'webhook' ? trigger.sourceId : null,
    watchedJobId: trigger.type === 'run' ? trigger.jobId : null,
  };
}

export function createJobsRepo(db: TenantDb) {
  return {
    /** A live job by id or slug; an id wins over another job's slug that happens to spell it. */
    find: async (ref: string) => {
      const jobs = await db.job.findMany({ where: { deletedAt: null, OR: [{ id: ref }, { slug: ref }] }, include: withTriggers, take: 2 });
      return jobs.find((job) => job.id === ref) ?? jobs[0] ?? null;
    },

    /** Every live job of the tenant with its triggers (the catalog's read). */
    live: () => db.job.findMany({ where: { deletedAt: null }, include: withTriggers }),

    list: ({ limit, after }: KeysetRequest<string>, filter: { enabled?: boolean }) =>
      db.job.findMany({
        where: { deletedAt: null, enabled: filter.enabled, id: after === undefined ? undefined : { lt: after } },
        orderBy: { id: 'desc' },
        take: limit + 1,
        include: withTriggers,
      }),

    /** Slugs in use that start with `prefix`, for deriving a free one. */
    slugsStartingWith: async (prefix: string) =>
      new Set((await db.job.findMany({ where: { slug: { startsWith: prefix } }, select: { slug: true } })).map((job) => job.slug)),

    create: (id: string, fields: Required<Pick<JobFields, 'name' | 'slug' | 'promptTemplate'>> & JobFields, triggers: Trigger[]) =>
      db.job.create({
        data: { id, ...fields, triggers: { create: triggers.map(triggerRow) } } as Prisma.JobUncheckedCreateInput,
        include: withTriggers,
      }),

    /** Changes the fields given and, when `triggers` is given, replaces them all; null when the job is gone. */
    update: (id: string, fields: JobFields, triggers: Trigger[] | undefined) =>
      db.$transaction(async (tx) => {
        const { network, workspace, report, ...columns } = fields;
        // A JSON column is emptied by the database's NULL, which Prisma spells DbNull (the same in either client).
        const data = {
          ...columns,
          ...(network !== undefined && { network: network ?? Prisma.DbNull }),
          ...(workspace !== undefined && { workspace: workspace ?? Prisma.DbNull }),
          ...(report !== undefined && { report: report ?? Prisma.DbNull }),
          updatedAt: new Date(),
        };
        const { count } = await tx.job.updateMany({ where: { id, deletedAt: null }, data });
        if (count === 0) return null;
        if (triggers) {
          await tx.trigger.deleteMany({ where: { jobId: id } });
          await tx.trigger.createMany({ data: triggers.map((trigger, position) => ({ ...triggerRow(trigger, position), jobId: id })) as Prisma.TriggerCreateManyInput[] });
        }
        return tx.job.findFirst({ where: { id }, include: withTriggers });
      }),

    setEnabled: async (id: string, enabled: boolean) => {
      const { count } = await db.job.updateMany({ where: { id, deletedAt: null, enabled: !enabled }, data: { enabled, updatedAt: new Date() } });
      return count;
    },

    /** Marks the job deleted, frees its slug and drops its triggers; false when it was already gone. */
    softDelete: (id: string, slug: string) =>
      db.$transaction(async (tx) => {
        const { count } = await tx.job.updateMany({ where: { id, deletedAt: null }, data: { deletedAt: new Date(), slug, enabled: false } });
        if (count === 0) return false;
        await tx.trigger.deleteMany({ where: { jobId: id } });
        return true;
      }),

    /** Every run trigger of the tenant as an edge: a run of `from` finishing starts `to`. */
    runTriggerEdges: async () =>
      (await db.trigger.findMany({ where: { type: 'run' }, select: { jobId: true, watchedJobId: true } })).map((edge) => ({ from: edge.watchedJobId!, to: edge.jobId })),

    /** A live source: a deleted one takes no deliveries, so no trigger may name it. */
    webhookSourceExists: async (id: string) => (await db.webhookSource.count({ where: { id, deletedAt: null } })) > 0,
    /** The formats of the webhook sources, by id. */
    sourceFormats: async (ids: string[]) =>
      new Map((await db.webhookSource.findMany({ where: { id: { in: ids } }, select: { id: true, format: true } })).map((source) => [source.id, source.format])),
    /**
     * A source's most recent recorded deliveries, newest first: of the event names given (`issues.labeled`,
     * `push`, `invoice.paid`: any split of a name into event and action), or of any event for null.
     */
    recentDeliveries: (sourceId: string, names: string[] | null, take: number) =>
      db.webhookActivity.findMany({
        where: {
          sourceId,
          ...(names && {
            OR: names.flatMap((name) => [
              { event: name, action: null },
              ...[...name.matchAll(/\./g)].map(({ index }) => ({ event: name.slice(0, index), action: name.slice(index + 1) })),
            ]),
          }),
        },
        orderBy: { id: 'desc' },
        take,
        select: { event: true, action: true, context: true },
      }),
  };
}

export type JobsRepo = ReturnType<typeof createJobsRepo>;
