// The package's entry: `createFlows`, its error, and the contract's types under readable names.
export type { Flows, FlowsOptions, FollowOptions, WaitOptions } from './api';
export type { RefreshOptions, Tokens } from './auth';
export { FlowsApiError } from './errors';
export { createFlows } from './flows';
export type { components, operations, paths } from './generated/openapi';
export type * from './types';
