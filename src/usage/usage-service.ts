// What the tenant's runs spent over a window, per job or per day: the window's rules and order are pure
// (usage-fns.ts), the sums are the database's (usage-repo.ts).
import type { TenantDb } from '../db/tenant-scope';
import { usageSummary, usageWindow, type UsageGrouping, type UsageSummary } from './usage-fns';
import { createUsageRepo } from './usage-repo';

export interface UsageDeps {
  now?: () => Date;
}

export function createUsageService({ now = () => new Date() }: UsageDeps = {}) {
  return {
    async summary(db: TenantDb, query: { since?: string; until?: string; groupBy?: UsageGrouping }): Promise<UsageSummary> {
      const window = usageWindow(query, now());
      const groupBy = query.groupBy ?? 'job';
      return usageSummary(window, groupBy, await createUsageRepo(db).sums(window.since, window.until, groupBy));
    },
  };
}

export type UsageService = ReturnType<typeof createUsageService>;
