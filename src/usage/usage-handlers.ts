import type { HandlerMap } from '../http/types';
import type { UsageService } from './usage-service';

export function usageHandlers(usage: UsageService): HandlerMap {
  return {
    getUsage: async ({ db, query }) => ({ status: 200, body: await usage.summary(db, query) }),
    getBudget: async ({ db }) => ({ status: 200, body: await usage.budget(db) }),
    setBudget: async ({ db, body }) => ({ status: 200, body: await usage.setBudget(db, body.monthlyUsd) }),
  };
}
