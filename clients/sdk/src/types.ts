// Readable names for the contract's schemas, so callers write `Job` rather than
// `components['schemas']['Job']`. Everything here comes from the generated types; nothing is restated.
import type { components } from './generated/openapi';

type Schemas = components['schemas'];

export type Me = Schemas['Me'];
export type Job = Schemas['Job'];
export type JobCreate = Schemas['JobCreate'];
export type JobUpdate = Schemas['JobUpdate'];
export type InvocationRequest = Schemas['InvocationRequest'];
export type Invocation = Schemas['Invocation'];
export type Run = Schemas['Run'];
export type RunState = Schemas['RunState'];
export type TraceEvent = Schemas['RunTraceEvent'];
export type ConditionTestRequest = Schemas['ConditionTestRequest'];
export type ConditionDecision = Schemas['ConditionDecision'];
export type TemplateTestRequest = Schemas['TemplateTestRequest'];
export type TemplateTestResult = Schemas['TemplateTestResult'];
export type WebhookActivity = Schemas['WebhookActivity'];
export type WebhookSource = Schemas['WebhookSource'];
export type WebhookSourceCreate = Schemas['WebhookSourceCreate'];
export type WebhookSourceWithSecret = Schemas['WebhookSourceWithSecret'];
export type WebhookRefusal = Schemas['WebhookRefusal'];
export type UsageSummary = Schemas['UsageSummary'];
export type UsageTotals = Schemas['UsageTotals'];
export type UsageGroup = Schemas['UsageGroup'];
export type Budget = Schemas['Budget'];
