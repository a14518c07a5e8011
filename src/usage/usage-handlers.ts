import type { HandlerMap } from '../http/types';
import type { UsageService } from './usage-service';

export function usageHandlers(usage: UsageService): HandlerMap {
  return {
    getUsage: async ({ db, query }) => ({ status: 200, body: await usage.summary(db, query) }),
  };
}
