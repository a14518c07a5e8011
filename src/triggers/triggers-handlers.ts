import type { HandlerMap } from '../http/types';
import type { TriggersService } from './triggers-service';

export function triggersHandlers(triggers: TriggersService): HandlerMap {
  return {
    testJobConditions: async ({ body }) => ({ status: 200, body: triggers.testConditions(body) }),
    getTriggerContexts: async ({ db }) => ({ status: 200, body: await triggers.contexts(db) }),
  };
}
