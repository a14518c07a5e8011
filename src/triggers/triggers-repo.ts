// Trigger-related reads of tenant data. `db` is the tenant-bound client or a transaction on it, so the
// tenant scope adds the tenant id to every query.
import type { TenantDb } from '../db/tenant-scope';

export function countWebhookSources(db: Pick<TenantDb, 'webhookSource'>): Promise<number> {
  return db.webhookSource.count();
}
