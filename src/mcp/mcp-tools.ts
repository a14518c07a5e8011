// The MCP tools as data: each is a contract operation under a tool's name, with what it does to the world
// as annotations. Its input schema, output schema, description and scope are derived from the contract
// (the operation's path and query parameters and its JSON body's properties, side by side; its success
// answer, a list as `{ items, nextCursor }`), so a tool takes exactly what the REST operation takes,
// checked the same way, and answers what it answers.
import type { Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { OperationId } from '../http/types';
import { requirementOf } from '../http/security';
import { portableSchema, type Schema } from './mcp-schema-fns';

/** Reads Flows' own records, or evaluates what it is given: nothing changes, nothing outside is reached. */
const READS: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
/** Starts a run, whose agent may act outside Flows (open a pull request, call an API); each call starts another. */
const STARTS_A_RUN: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };
/** Ends a run's agent, losing its work in progress; stopping it again changes nothing more. */
const STOPS_A_RUN: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };

/** The operations offered as tools, by tool name. */
export const OPERATION_TOOLS: Record<string, { operationId: OperationId; annotations: ToolAnnotations }> = {
  list_jobs: { operationId: 'listJobs', annotations: READS },
  get_job: { operationId: 'getJob', annotations: READS },
  invoke_job: { operationId: 'invokeJob', annotations: STARTS_A_RUN },
  list_runs: { operationId: 'listRuns', annotations: READS },
  get_run: { operationId: 'getRun', annotations: READS },
  get_run_trace: { operationId: 'getRunTrace', annotations: READS },
  stop_run: { operationId: 'stopRun', annotations: STOPS_A_RUN },
  get_usage: { operationId: 'getUsage', annotations: READS },
  get_budget: { operationId: 'getBudget', annotations: READS },
  test_conditions: { operationId: 'testJobConditions', annotations: READS },
  test_template: { operationId: 'testJobTemplate', annotations: READS },
  backtest_job: { operationId: 'backtestJob', annotations: READS },
  list_webhook_activity: { operationId: 'listWebhookActivity', annotations: READS },
  get_webhook_activity: { operationId: 'getWebhookActivity', annotations: READS },
  get_trigger_contexts: { operationId: 'getTriggerContexts', annotations: READS },
  list_webhook_source_refusals: { operationId: 'listWebhookSourceRefusals', annotations: READS },
};

type ObjectSchema = Tool['inputSchema'] & Schema;

export interface OperationTool {
  name: string;
  operationId: OperationId;
  method: string;
  path: string;
  title: string;
  description: string;
  /** The scope the operation needs, or null. */
  scope: string | null;
  inputSchema: ObjectSchema & { properties: Record<string, Schema>; additionalProperties: false };
  outputSchema: ObjectSchema;
  annotations: ToolAnnotations;
  /** Where each argument goes in the request. */
  places: Record<string, 'path' | 'query' | 'body'>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** The first paragraph of a description, short enough for a tool list. */
const firstParagraph = (text = '') => text.split(/\n\s*\n/)[0].replace(/\s+/g, ' ').trim().slice(0, 600);

/** What a list's `Link` header becomes beside its items. */
const NEXT_CURSOR: Schema = { type: ['string', 'null'], description: 'Pass it as `cursor` for the next page; null on the last page.' };

/** The operation's success answer as a tool's structured content: an object, a list as `{ items, nextCursor }`. */
function outputSchemaOf(name: string, operation: Record<string, any>): ObjectSchema {
  const answers = Object.entries<any>(operation.responses ?? {})
    .filter(([status]) => /^2\d\d$/.test(status))
    .map(([, response]) => response.content?.['application/json']?.schema as Schema | undefined);
  const [schema] = answers;
  if (!schema || answers.some((other) => JSON.stringify(other) !== JSON.stringify(schema))) throw new Error(`the tool ${name} needs one JSON answer schema for its operation's successes`);
  if (schema.type === 'array') return { type: 'object', properties: { items: schema, nextCursor: NEXT_CURSOR }, required: ['items', 'nextCursor'], additionalProperties: false };
  if (schema.type !== 'object') throw new Error(`the tool ${name} answers ${schema.type}, not an object or a list`);
  return schema as ObjectSchema;
}

/** Derives every tool of OPERATION_TOOLS from the inlined contract; a clash of argument names is a bug, thrown at start. */
export function operationTools(document: { paths: Record<string, Record<string, any>> }): OperationTool[] {
  const operations = new Map<string, { method: string; path: string; item: Record<string, any>; operation: Record<string, any> }>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) if (item[method]) operations.set(item[method].operationId, { method, path, item, operation: item[method] });
  }
  return Object.entries(OPERATION_TOOLS).map(([name, { operationId, annotations }]) => {
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
      title: operation.summary ?? name,
      description: [operation.summary, firstParagraph(operation.description)].filter(Boolean).join('. '),
      scope: requirementOf(operation.security)?.scope ?? null,
      inputSchema: portableSchema({ type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false }),
      outputSchema: portableSchema(outputSchemaOf(name, operation)),
      annotations,
      places,
    };
  });
}

/** A job's tool name: `run_` and its slug with `-` as `_`. */
export const jobToolName = (slug: string) => `run_${slug.replace(/-/g, '_')}`;

export interface InvocableJob {
  slug: string;
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/**
 * The typed tool of an invocable job: its arguments are the invocation's `data`, checked by the trigger's
 * input schema (without one, any object); it answers as `invoke_job` does.
 */
export function jobTool(job: InvocableJob, invocation: ObjectSchema): Tool {
  const described = Object.keys(job.inputSchema).length > 0;
  return {
    name: jobToolName(job.slug),
    title: `Run ${job.name}`,
    description: `Run the job "${job.name}" (${job.slug}) with this data${job.description ? `: ${job.description}` : '.'}${described ? '' : ' The job declares no input schema: any object is taken.'}`,
    inputSchema: portableSchema({ properties: {}, ...(described ? {} : { additionalProperties: true }), ...job.inputSchema, type: 'object' as const }),
    outputSchema: invocation,
    annotations: STARTS_A_RUN,
  };
}

/** How each tool appears in `tools/list`. */
export const listed = (tool: OperationTool): Tool => ({ name: tool.name, title: tool.title, description: tool.description, inputSchema: tool.inputSchema, outputSchema: tool.outputSchema, annotations: tool.annotations });
