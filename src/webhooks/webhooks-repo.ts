// Webhook sources, their activity and their refused deliveries in the database, through the tenant-bound
// client. Deleted sources stay as rows (their activity remains readable) and are invisible here.
import type { components } from '../../generated/openapi';
import type { Prisma } from '../../generated/prisma/sqlite/client';
import { toJson } from '../db/json';
import type { TenantDb } from '../db/tenant-scope';
import type { KeysetRequest } from '../http/pagination';

export interface NewActivity {
  id: string;
  sourceId: string;
  deliveryId: string;
  event: string;
  action: string | null;
  receivedAt: Date;
  context: Record<string, unknown>;
  /** The body's hash for formats that sign no delivery id (webhooks-fns.ts `replayHash`); null otherwise. */
  bodyHash: string | null;
}

/** A refused delivery as recorded (webhooks-refusals.ts): never its body, nor a header's value. */
export interface NewRefusal {
  id: string;
  sourceId: string;
  receivedAt: Date;
  reason: string;
  message: string;
  headerNames: string[];
  bodyBytes: number;
  bodySha256: string | null;
  unrecordedBefore: number;
}

/** How one trigger decided on a recorded delivery, and the run it started. */
export type Decision = components['schemas']['WebhookActivity']['decisions'][number];

/** A delivery as recorded at intake: no decisions yet, waiting for evaluation. */
const activityRow = (activity: NewActivity) => ({ ...activity, context: toJson(activity.context), decisions: toJson([]), runIds: toJson([]) }) as Prisma.WebhookActivityUncheckedCreateInput;

export function createWebhooksRepo(db: TenantDb) {
  const { id: tenantId, sql } = db.$tenant();
  return {
    createSource: (data: { id: string; name: string; format: string; signatureHeader: string | null; secretCiphertext: string; githubAppId: string | null }) =>
      db.webhookSource.create({ data: data as Prisma.WebhookSourceUncheckedCreateInput }),
    findSource: (id: string) => db.webhookSource.findFirst({ where: { id, deletedAt: null } }),
    listSources: ({ limit, after }: KeysetRequest<string>) =>
      db.webhookSource.findMany({ where: { deletedAt: null, id: after === undefined ? undefined : { lt: after } }, orderBy: { id: 'desc' }, take: limit + 1 }),
    setSecret: (id: string, secretCiphertext: string) => db.webhookSource.updateMany({ where: { id, deletedAt: null }, data: { secretCiphertext } }),
    /** A deleted source lets its GitHub App go: its activity stays readable, bound to nothing. */
    deleteSource: (id: string) => db.webhookSource.updateMany({ where: { id, deletedAt: null }, data: { deletedAt: new Date(), githubAppId: null } }),
    triggersUsing: (sourceId: string) => db.trigger.count({ where: { sourceId } }),

    createActivity: (activity: NewActivity) => db.webhookActivity.create({ data: activityRow(activity), select: { id: true } }),
    /** Deliveries arriving together, in one statement (intake's hot path). */
    createActivities: (activities: NewActivity[]) =>
      db.$insertRows(
        'WebhookActivity',
        activities.map((activity) => ({ ...activity, context: { json: activity.context }, decisions: { json: [] }, runIds: { json: [] } })),
      ),
    findActivity: (id: string) => db.webhookActivity.findFirst({ where: { id } }),
    /** The recordings a new one collided with: the same delivery id, or the same body (up to one of each). */
    findFirstRecordings: (sourceId: string, deliveryId: string, bodyHash: string | null) =>
      db.webhookActivity.findMany({
        where: { sourceId, OR: [{ deliveryId }, ...(bodyHash === null ? [] : [{ bodyHash }])] },
        select: { id: true, deliveryId: true, receivedAt: true, bodyHash: true },
        take: 2,
      }),
    /** A recording older than the replay window gives up its body's hash to a new delivery of the same body. */
    releaseBodyHash: (id: string, bodyHash: string) => db.webhookActivity.updateMany({ where: { id, bodyHash }, data: { bodyHash: null } }),
    listActivity: ({ limit, after }: KeysetRequest<string>, filter: { sourceId?: string }) =>
      db.webhookActivity.findMany({ where: { sourceId: filter.sourceId, id: after === undefined ? undefined : { lt: after } }, orderBy: { id: 'desc' }, take: limit + 1 }),
    /** Deliveries of the sources received in [since, until), newest first. */
    activityInWindow: (sourceIds: string[], since: Date, until: Date, take: number) =>
      db.webhookActivity.findMany({
        where: { sourceId: { in: sourceIds }, receivedAt: { gte: since, lt: until } },
        orderBy: [{ receivedAt: 'desc' }, { id: 'desc' }],
        take,
        select: { id: true, sourceId: true, deliveryId: true, event: true, action: true, receivedAt: true, context: true },
      }),
    /** One refused delivery, with one plain INSERT (intake's path). */
    createRefusal: (refusal: NewRefusal) => db.$insertRows('WebhookRefusal', [{ ...refusal, headerNames: { json: refusal.headerNames } }]),
    listRefusals: (sourceId: string, { limit, after }: KeysetRequest<string>) =>
      db.webhookRefusal.findMany({ where: { sourceId, id: after === undefined ? undefined : { lt: after } }, orderBy: { id: 'desc' }, take: limit + 1 }),
    /** The matches and errors, the runs they started and the count of misses; once (a delivery already evaluated stays). */
    setOutcome: (id: string, decisions: Decision[], missCount: number, evaluatedAt: Date) =>
      sql.run('UPDATE "WebhookActivity" SET "decisions" = ?::jsonb, "runIds" = ?::jsonb, "missCount" = ?, "evaluatedAt" = ?::timestamp(3) WHERE "tenantId" = ? AND "id" = ? AND "evaluatedAt" IS NULL', [
        { json: decisions },
        { json: decisions.flatMap((decision) => (decision.runId ? [decision.runId] : [])) },
        missCount,
        evaluatedAt,
        tenantId,
        id,
      ]),
  };
}

export type WebhooksRepo = ReturnType<typeof createWebhooksRepo>;
export type SourceRow = NonNullable<Awaited<ReturnType<WebhooksRepo['findSource']>>>;
export type ActivityRow = NonNullable<Awaited<ReturnType<WebhooksRepo['findActivity']>>>;
export type RefusalRow = Awaited<ReturnType<WebhooksRepo['listRefusals']>>[number];
