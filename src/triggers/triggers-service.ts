// The rules of triggers: testing conditions against a prepared context, and what templates can see.
import type { TenantDb } from '../db/tenant-scope';
import { decide, type Decision } from './conditions-fns';
import { triggerContexts, type TriggerContexts } from './trigger-contexts-fns';
import { countWebhookSources } from './triggers-repo';

export function createTriggersService() {
  return {
    /** Evaluates only the context given: nothing is routed, fetched or invoked. */
    testConditions(input: { webhook: Record<string, unknown>; conditions?: Record<string, unknown> }): Decision {
      return decide(input.conditions, input.webhook);
    },

    /** Autocomplete metadata for template editors; webhooks are available once the tenant has a source. */
    async contexts(db: TenantDb): Promise<TriggerContexts> {
      return triggerContexts({ hasWebhookSource: (await countWebhookSources(db)) > 0 });
    },
  };
}

export type TriggersService = ReturnType<typeof createTriggersService>;
