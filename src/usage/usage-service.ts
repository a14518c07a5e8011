// What the tenant's runs spent over a window, per job or per day: the window's rules and order are pure
// (usage-fns.ts), the sums are the database's (usage-repo.ts).
import type { TenantDb } from '../db/tenant-scope';
import { keptFor } from '../lib/kept';
import { budgetMessage, budgetOf, monthOf, usageSummary, usageWindow, type Budget, type UsageGrouping, type UsageSummary } from './usage-fns';
import { createUsageRepo } from './usage-repo';

export interface UsageDeps {
  now?: () => Date;
  /** The operator's monthly budget for every tenant that sets none (FLOWS_TENANT_MONTHLY_BUDGET_USD); null: none. */
  defaultMonthlyBudgetUsd?: number | null;
}

/** How long a tenant's budget decision is kept before its spending is read again. */
const KEPT_MS = 5_000;

export function createUsageService({ now = () => new Date(), defaultMonthlyBudgetUsd = null }: UsageDeps = {}) {
  /** Per tenant, the latest decision on starting runs, kept a few seconds: starting runs reads spending now and then, not each time. */
  const kept = keptFor<{ month: { until: Date }; refusal: { until: Date; message: string } | null }>(KEPT_MS, { clock: () => now().getTime() });

  async function budget(db: TenantDb, own?: number | null): Promise<Budget> {
    const repo = createUsageRepo(db);
    const month = monthOf(now());
    const spent = usageSummary(month, 'day', await repo.sums(month.since, month.until, 'day')).total;
    return budgetOf(month, own === undefined ? await repo.ownBudget() : own, defaultMonthlyBudgetUsd, spent);
  }

  return {
    budget: (db: TenantDb) => budget(db),

    async setBudget(db: TenantDb, monthlyUsd: number | null): Promise<Budget> {
      await createUsageRepo(db).setOwnBudget(monthlyUsd);
      kept.forget(db.$tenant().id);
      return budget(db, monthlyUsd);
    },

    /** Why the tenant may start no run now (its budget is spent this month), or null; a tenant with no budget costs one small read. */
    async refusal(db: TenantDb): Promise<{ until: Date; message: string } | null> {
      const tenantId = db.$tenant().id;
      const decide = async () => {
        const own = await createUsageRepo(db).ownBudget();
        const month = monthOf(now());
        const read = own === null && defaultMonthlyBudgetUsd === null ? null : await budget(db, own);
        return { month, refusal: read?.exhausted ? { until: month.until, message: budgetMessage(read) } : null };
      };
      // A decision of last month is not kept into this one.
      const held = await kept.get(tenantId, decide);
      if (now() < held.month.until) return held.refusal;
      kept.forget(tenantId);
      return (await kept.get(tenantId, decide)).refusal;
    },

    async summary(db: TenantDb, query: { since?: string; until?: string; groupBy?: UsageGrouping }): Promise<UsageSummary> {
      const window = usageWindow(query, now());
      const groupBy = query.groupBy ?? 'job';
      return usageSummary(window, groupBy, await createUsageRepo(db).sums(window.since, window.until, groupBy));
    },
  };
}

export type UsageService = ReturnType<typeof createUsageService>;
