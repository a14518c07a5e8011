// The MCP tools as data: each is a contract operation under a tool's name. Its input schema, description
// and scope are derived from the contract (the operation's path and query parameters and its JSON body's
// properties, side by side), so a tool takes exactly what the REST operation takes, checked the same way.
import type { OperationId } from '../http/types';
import { requirementOf } from '../http/security';

/** The operations offered as tools, by tool name. */
export const OPERATION_TOOLS: Record<string, OperationId> = {
  list_jobs: 'listJobs',
  get_job: 'getJob',
  invoke_job: 'invokeJob',
  list_runs: 'listRuns',
  get_run: 'getRun',
  get_run_trace: 'getRunTrace',
  stop_run: 'stopRun',
  test_conditions: 'testJobConditions',
  test_template: 'testJobTemplate',
  backtest_job: 'backtestJob',
  list_webhook_activity: 'listWebhookActivity',
  get_webhook_activity: 'getWebhookActivity',
  get_trigger_contexts: 'getTriggerContexts',
};

type Schema = Record<string, any>;

export interface OperationTool {
  name: string;
  operationId: OperationId;
  method: string;
  path: string;
  description: string;
  /** The scope the operation needs, or null. */
  scope: string | null;
  inputSchema: { type: 'object'; properties: Record<string, Schema>; required?: string[]; additionalProperties: false };
  /** Where each argument goes in the request. */
  places: Record<string, 'path' | 'query' | 'body'>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** The first paragraph of a description, short enough for a tool list. */
const firstParagraph = (text = '') => text.split(/\n\s*\n/)[0].replace(/\s+/g, ' ').trim().slice(0, 600);

/** Derives every tool of OPERATION_TOOLS from the inlined contract; a clash of argument names is a bug, thrown at start. */
export function operationTools(document: { paths: Record<string, Record<string, any>> }): OperationTool[] {
  const operations = new Map<string, { method: string; path: string; item: Record<string, any>; operation: Record<string, any> }>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) if (item[method]) operations.set(item[method].operationId, { method, path, item, operation: item[method] });
  }
  return Object.entries(OPERATION_TOOLS).map(([name, operationId]) => {
    const found = operations.get(operationId);
    if (!found) throw new Error(`the contract has no operation ${operationId} for the tool ${name}`);
    const { method, path, item, operation } = found;
    const properties: Record<string, Schema> = {};
    const required: string[] = [];
    const places: OperationTool['places'] = {};
    const add = (arg: string, schema: Schema, place: 'path' | 'query' | 'body', isRequired: boolean) => {
      if (places[arg]) throw new Error(`the tool ${name} would take ${arg} twice`);
      properties[arg] = schema;
      places[arg] = place;
      if (isRequired) required.push(arg);
    };
    for (const parameter of [...(item.parameters ?? []), ...(operation.parameters ?? [])]) {
      if (parameter.in !== 'path' && parameter.in !== 'query') continue;
      add(parameter.name, { ...parameter.schema, description: parameter.description }, parameter.in, parameter.in === 'path' || Boolean(parameter.required));
    }
    const body = operation.requestBody?.content?.['application/json']?.schema as Schema | undefined;
    for (const [field, schema] of Object.entries<Schema>(body?.properties ?? {})) add(field, schema, 'body', Boolean(operation.requestBody?.required && body?.required?.includes(field)));
    return {
      name,
      operationId,
      method: method.toUpperCase(),
      path,
      description: [operation.summary, firstParagraph(operation.description)].filter(Boolean).join('. '),
      scope: requirementOf(operation.security)?.scope ?? null,
      inputSchema: { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false },
      places,
    };
  });
}

/** A job's tool name: `run_` and its slug with `-` as `_`. */
export const jobToolName = (slug: string) => `run_${slug.replace(/-/g, '_')}`;
