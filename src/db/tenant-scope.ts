// Every query on tenant data goes through a client scoped to one tenant: the tenant id is added to the
// filter of every read, update and delete, and to the data of every create. One place for the rule, so
// a repository cannot forget it.
import type { Db } from './client';
import { insertRows, type Cell } from './insert-rows';
import { sqlFor } from './sql';

const TENANT_MODEL_NAMES = [
  'Job',
  'Trigger',
  'ScheduleSlot',
  'Invocation',
  'Run',
  'RunEvent',
  'WebhookSource',
  'WebhookActivity',
  'WebhookRefusal',
  'VmhostConnection',
  'ExecutionTarget',
  'AgentIntegration',
  'EventSubscription',
  'EventDelivery',
  'Secret',
  'GithubApp',
  'SenderConnection',
  'RunPatch',
] as const;
type TenantModel = (typeof TENANT_MODEL_NAMES)[number];
/** Models owned by a tenant (those with a `tenantId` column that holds tenant data). */
export const TENANT_MODELS = new Set<string>(TENANT_MODEL_NAMES);

const FILTERED = new Set([
  'findUnique', 'findUniqueOrThrow', 'findFirst', 'findFirstOrThrow', 'findMany', 'count', 'aggregate', 'groupBy',
  'update', 'updateMany', 'updateManyAndReturn', 'delete', 'deleteMany', 'upsert',
]);
const CREATING = new Set(['create', 'createMany', 'createManyAndReturn', 'upsert']);

type Args = { where?: Record<string, unknown>; data?: unknown; create?: Record<string, unknown> };

export function scopeArgs(operation: string, args: Args, tenantId: string): Args {
  const scoped: Args = { ...args };
  if (FILTERED.has(operation)) scoped.where = { ...args.where, tenantId };
  if (CREATING.has(operation)) {
    if (operation === 'upsert') scoped.create = { ...args.create, tenantId };
    else if (Array.isArray(args.data)) scoped.data = args.data.map((row) => ({ ...row, tenantId }));
    else scoped.data = { ...(args.data as object), tenantId };
  }
  if (!FILTERED.has(operation) && !CREATING.has(operation)) throw new Error(`operation ${operation} is not tenant-scoped`);
  return scoped;
}

export function forTenant(db: Db, tenantId: string) {
  const tenant = { id: tenantId, sql: sqlFor(db) };
  return db.$extends({
    name: 'tenant-scope',
    client: {
      /** The tenant this client is bound to, and hand-written SQL (sql.ts) whose statements must name it. */
      $tenant: () => tenant,
      /** Rows of a tenant model written with one plain INSERT (insert-rows.ts), each stamped with the tenant. */
      $insertRows: (model: TenantModel, rows: Record<string, Cell>[]) => insertRows(tenant.sql, model, rows.map((row) => ({ ...row, tenantId }))),
    },
    query: {
      $allModels: {
        $allOperations({ model, operation, args, query }) {
          if (!TENANT_MODELS.has(model)) return query(args);
          return query(scopeArgs(operation, args as Args, tenantId) as typeof args);
        },
      },
    },
  });
}

export type TenantDb = ReturnType<typeof forTenant>;
