// /mcp: the MCP surface over Streamable HTTP, stateless (a server and transport per request, so any
// instance answers any request) with JSON answers. A request from a foreign Host or Origin is refused first
// (mcp-origin.ts). Authentication is the API's: a bearer token, here bound to the MCP resource (an API token
// is refused, as an MCP token is by the API), its owner's membership and session version checked on every
// call; cookies count for nothing. Tools are the contract operations of mcp-tools.ts, run by the REST
// handlers themselves after the contract's own validation, plus one typed tool per invocable job; resources
// are runs and their traces (mcp-resources.ts).
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import express, { Router, type Request } from 'express';
import type { ErrorObject } from 'ajv';
import type { BearerVerifier } from '../auth/bearer-verifier';
import { holdsScope, type Principal } from '../auth/principal';
import type { TenantDb } from '../db/tenant-scope';
import type { Api } from '../http/api';
import { metadataUrlOf } from '../http/security';
import { validationMessage } from '../http/validation-errors';
import type { HandlerMap } from '../http/types';
import { InvalidInvocationData } from '../jobs/jobs-fns';
import type { JobsService } from '../jobs/jobs-service';
import { AppError, MethodNotAllowed, Unauthenticated } from '../lib/errors';
import type { Logger } from '../lib/logger';
import { clip } from '../lib/text';
import { invocationOf } from '../runs/runs-handlers';
import type { RunsService } from '../runs/runs-service';
import { allowedCallers, checkCaller } from './mcp-origin';
import { serveRunResources } from './mcp-resources';
import { jobTool, jobToolName, listed, operationTools, type OperationTool } from './mcp-tools';

export interface McpDeps {
  /** The database as one tenant sees it. */
  tenantDb(tenantId: string): TenantDb;
  baseUrl: URL;
  /** Browser origins besides BASE_URL's whose pages may call (FLOWS_MCP_ALLOWED_ORIGINS). */
  allowedOrigins: string[];
  /** The resource indicator MCP tokens are bound to (`<origin>/mcp`). */
  resource: string;
  bearer: BearerVerifier;
  api: Api;
  handlers: HandlerMap;
  jobs: Pick<JobsService, 'invocable'>;
  runs: Pick<RunsService, 'invoke' | 'list' | 'get' | 'trace'>;
  logger: Logger;
  version: string;
}

/** A tool's answer: the structured content, and the same JSON as text for clients that read text only. */
const answer = (structured: Record<string, unknown>): CallToolResult => ({ content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured });
/** A tool error: the API's code and message as text (an error carries no structured content to check). */
const toolError = (code: string, message: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text: `${code}: ${message}` }] });
const invalidArguments = (tool: string, problem: string) => toolError('validation_failed', `Invalid arguments for ${tool}: ${problem}`);
/** A name that is no tool of this caller is a protocol error (specification, server/tools, "Error Handling"). */
const unknownTool = (name: string) => new McpError(ErrorCode.InvalidParams, `Unknown tool: ${clip(name)}. A job's tool is run_<slug> of an enabled job with an invocation trigger.`);

/** What a list answer's `Link` header says the next page's cursor is. */
const cursorOf = (headers: Record<string, string> = {}) => (headers.Link ? new URL(/<([^>]+)>/.exec(headers.Link)![1], 'http://local').searchParams.get('cursor') : null);

export function mcpRouter(deps: McpDeps): Router {
  const tools = operationTools(deps.api.contract.inlined as never);
  const invocation = tools.find((tool) => tool.operationId === 'invokeJob')!.outputSchema;
  const metadata = metadataUrlOf(deps.resource);
  const challenge = (extra = '') => `Bearer realm="flows"${extra}, resource_metadata="${metadata}"`;

  async function authenticate(req: Request): Promise<Principal> {
    const authorization = req.get('authorization');
    if (authorization === undefined) throw new Unauthenticated('unauthenticated', 'Authenticate with a bearer token for this MCP endpoint.', challenge());
    const token = /^Bearer ([\x21-\x7e]+)$/i.exec(authorization.trim())?.[1];
    const principal = token && (await deps.bearer.verify(token, deps.resource));
    if (!principal) throw new Unauthenticated('invalid_token', 'The access token is invalid, expired, revoked, or not bound to this MCP endpoint.', challenge(', error="invalid_token"'));
    return principal;
  }

  /** Runs an operation's REST handler on the tool's arguments, after the contract's validation of them. */
  async function callOperation(tool: OperationTool, principal: Principal, args: Record<string, unknown>, log: Logger): Promise<CallToolResult> {
    if (!holdsScope(principal, tool.scope)) return toolError('insufficient_scope', `This tool requires the scope "${tool.scope}".`);
    const unknown = Object.keys(args).find((arg) => !tool.places[arg]);
    if (unknown) return invalidArguments(tool.name, `\`${clip(unknown)}\` is not an argument of this tool.`);
    // Checked here: a missing path parameter would make another path (`/runs//trace`), refused for another reason.
    const missing = tool.inputSchema.required?.find((arg) => args[arg] === undefined);
    if (missing) return invalidArguments(tool.name, `\`${missing}\` is required.`);
    const params: Record<string, string> = {};
    const query: Record<string, string> = {};
    const body: Record<string, unknown> = {};
    for (const [arg, value] of Object.entries(args)) {
      if (tool.places[arg] === 'path') params[arg] = String(value);
      else if (tool.places[arg] === 'query') query[arg] = String(value);
      else body[arg] = value;
    }
    const path = tool.path.replace(/\{(\w+)\}/g, (_, name) => encodeURIComponent(params[name] ?? ''));
    const request = { method: tool.method, path, query, headers: { 'content-type': 'application/json' }, body: tool.method === 'GET' || tool.method === 'DELETE' ? undefined : body };
    // The contract's messages name fields as the tool's arguments are named (`runId`, `conditions.all[0].op`).
    const validation = deps.api.backend.validateRequest(request, tool.operationId);
    if (!validation.valid) return invalidArguments(tool.name, validationMessage(validation.errors as ErrorObject[]));
    const handler = deps.handlers[tool.operationId] as any;
    const search = new URLSearchParams(query).toString();
    const result = await handler({
      principal,
      db: deps.tenantDb(principal.tenantId),
      body: request.body,
      params,
      // As the contract coerces a query: numbers for integer parameters.
      query: Object.fromEntries(Object.entries(query).map(([name, value]) => [name, tool.inputSchema.properties[name]?.type === 'integer' ? Number(value) : value])),
      req: { originalUrl: `${path}${search ? `?${search}` : ''}`, log } as unknown as Request,
      res: undefined,
      log,
    });
    return answer(Array.isArray(result.body) ? { items: result.body, nextCursor: cursorOf(result.headers) } : (result.body ?? {}));
  }

  /** One server for one request, knowing its caller: tools it may use, the tenant's jobs at this moment. */
  function serverFor(principal: Principal, req: Request): Server {
    const db = deps.tenantDb(principal.tenantId);
    const server = new Server({ name: 'flows', version: deps.version }, { capabilities: { tools: {}, resources: {} } });
    const jobTools = async () => (holdsScope(principal, 'runs:write') ? deps.jobs.invocable(db) : []);
    // The detail of an unexpected failure goes to the log; the caller gets the request id to quote.
    const internal = (err: unknown) => {
      req.log.error({ err }, 'MCP request failed');
      return new McpError(ErrorCode.InternalError, `The server could not complete the request (request id ${req.id}).`);
    };

    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [...tools.filter((tool) => holdsScope(principal, tool.scope)).map(listed), ...(await jobTools()).map((job) => jobTool(job, invocation))],
    }));

    async function callJob(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
      if (!holdsScope(principal, 'runs:write')) return toolError('insufficient_scope', 'This tool requires the scope "runs:write".');
      const job = (await jobTools()).find((candidate) => jobToolName(candidate.slug) === name);
      if (!job) throw unknownTool(name);
      try {
        return answer(invocationOf(await deps.runs.invoke(db, job.id, { data: args })));
      } catch (err) {
        if (!(err instanceof InvalidInvocationData)) throw err;
        return invalidArguments(name, err.field ? `\`${err.field}\` ${err.problem}.` : `the arguments ${err.problem}.`);
      }
    }

    server.setRequestHandler(CallToolRequestSchema, async ({ params: { name, arguments: args = {} } }) => {
      try {
        const tool = tools.find((candidate) => candidate.name === name);
        if (tool) return await callOperation(tool, principal, args, req.log);
        if (name.startsWith('run_')) return await callJob(name, args);
        throw unknownTool(name);
      } catch (err) {
        if (err instanceof McpError) throw err;
        if (err instanceof AppError && err.expose) return toolError(err.code, err.message);
        throw internal(err);
      }
    });

    serveRunResources(server, { db, runs: deps.runs, readable: holdsScope(principal, 'runs:read'), internal });
    return server;
  }

  return Router()
    .use('/mcp', checkCaller(allowedCallers(deps.baseUrl, deps.allowedOrigins)))
    .post('/mcp', express.json({ limit: '1mb' }), async (req, res, next) => {
      try {
        const principal = await authenticate(req);
        const server = serverFor(principal, req);
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        res.on('close', () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        await transport.handleRequest(req, res, req.body);
      } catch (err) {
        next(err);
      }
    })
    .all('/mcp', (req, _res, next) => next(new MethodNotAllowed(req.method, ['POST'])));
}
