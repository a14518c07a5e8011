// The rules of triggers that need no stored state: testing conditions against a prepared context.
import { decide, type Decision } from './conditions-fns';

export function createTriggersService() {
  return {
    /** Evaluates only the context given: nothing is routed, fetched or invoked. */
    testConditions(input: { webhook: Record<string, unknown>; conditions?: Record<string, unknown> }): Decision {
      return decide(input.conditions, input.webhook);
    },
  };
}

export type TriggersService = ReturnType<typeof createTriggersService>;
