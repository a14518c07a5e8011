// The rules of triggers: testing conditions against a prepared context, and what templates can see.
import type { components } from '../../generated/openapi';
import type { TenantDb } from '../db/tenant-scope';
import { decide, type Decision } from './conditions-fns';
import { triggerContexts, type TriggerContexts } from './trigger-contexts-fns';
import { countWebhookSources } from './triggers-repo';

type ConditionTest = components['schemas']['ConditionTestRequest'];
type TestedFlow = NonNullable<components['schemas']['ConditionDecision']['flowControl']>;

export interface TriggersDeps {
  /** The keys a job's flow control gives a run of `context` (the jobs domain's rule). */
  flowKeys: (flowControl: NonNullable<ConditionTest['flowControl']>, context: Record<string, unknown>) => TestedFlow;
}

export function createTriggersService({ flowKeys }: TriggersDeps) {
  return {
    /** Evaluates only the context given: nothing is routed, fetched or invoked. */
    testConditions(input: ConditionTest): Decision & { flowControl?: TestedFlow } {
      const decision = decide(input.conditions, input.webhook);
      return input.flowControl ? { ...decision, flowControl: flowKeys(input.flowControl, input.webhook) } : decision;
    },

    /** Autocomplete metadata for template editors; webhooks are available once the tenant has a source. */
    async contexts(db: TenantDb): Promise<TriggerContexts> {
      return triggerContexts({ hasWebhookSource: (await countWebhookSources(db)) > 0 });
    },
  };
}

export type TriggersService = ReturnType<typeof createTriggersService>;
