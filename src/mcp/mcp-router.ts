// /mcp: the MCP surface over Streamable HTTP, stateless (a server and transport per request, so any
// instance answers any request) with JSON answers. Authentication is the API's: a bearer token, here bound
// to the MCP resource (an API token is refused, as an MCP token is by the API), its owner's membership and
// session version checked on every call; cookies count for nothing. Tools are the contract operations of
// mcp-tools.ts, run by the REST handlers themselves after the contract's own validation, plus one typed tool
// per invocable job; resources are runs and their traces.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import express, { Router, type Request } from 'express';
import type { BearerVerifier } from '../auth/bearer-verifier';
import { holdsScope, type Principal } from '../auth/principal';
import type { TenantDb } from '../db/tenant-scope';
import type { Api } from '../http/api';
import type { HandlerMap } from '../http/types';
import type { JobsService } from '../jobs/jobs-service';
import { AppError, MethodNotAllowed, Unauthenticated, ValidationFailed } from '../lib/errors';
import type { Logger } from '../lib/logger';
import type { RunsService } from '../runs/runs-service';
import { jobToolName, operationTools, type OperationTool } from './mcp-tools';

export interface McpDeps {
  /** The database as one tenant sees it. */
  tenantDb(tenantId: string): TenantDb;
  baseUrl: URL;
  /** The resource indicator MCP tokens are bound to (`<origin>/mcp`). */
  resource: string;
  bearer: BearerVerifier;
  api: Api;
  handlers: HandlerMap;
  jobs: Pick<JobsService, 'invocable'>;
  runs: Pick<RunsService, 'invoke' | 'get' | 'trace'>;
  logger: Logger;
  version: string;
}

const RUN_URI = /^flows:\/\/runs\/([^/]+)(\/trace)?$/;
const TRACE_LIMIT = 1000;

const toolError = (code: string, message: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text: `${code}: ${message}` }], structuredContent: { error: { code, message } } });
const asToolError = (err: unknown): CallToolResult => {
  if (err instanceof AppError && err.expose) return toolError(err.code, err.message);
  throw err;
};

/** What a list answer's `Link` header says the next page's cursor is. */
const cursorOf = (headers: Record<string, string> = {}) => (headers.Link ? new URL(/<([^>]+)>/.exec(headers.Link)![1], 'http://local').searchParams.get('cursor') : null);

/** A line a person reads, beside the structured answer. */
function summaryOf(tool: string, body: unknown, next: string | null): string {
  if (Array.isArray(body)) return `${body.length} item${body.length === 1 ? '' : 's'}${next ? '; more with this cursor: ' + next : ''}.`;
  const text = JSON.stringify(body) ?? '';
  return `${tool}: ${text.length > 600 ? `${text.slice(0, 600)}…` : text}`;
}

export function mcpRouter(deps: McpDeps): Router {
  const tools = operationTools(deps.api.backend.definition as never);
  const metadata = `${deps.baseUrl.origin}/.well-known/oauth-protected-resource/mcp`;
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
    if (unknown) return toolError('validation_failed', `\`${unknown}\` is not an argument of ${tool.name}.`);
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
    const validation = deps.api.backend.validateRequest(request, tool.operationId);
    if (!validation.valid) return toolError('validation_failed', `${tool.name}: ${validation.errors?.[0]?.instancePath || 'arguments'} ${validation.errors?.[0]?.message ?? 'are invalid'}.`);
    const handler = deps.handlers[tool.operationId] as any;
    const search = new URLSearchParams(query).toString();
    try {
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
      const next = cursorOf(result.headers);
      const structured = Array.isArray(result.body) ? { items: result.body, nextCursor: next } : (result.body ?? {});
      return { content: [{ type: 'text', text: summaryOf(tool.name, result.body, next) }], structuredContent: structured };
    } catch (err) {
      return asToolError(err);
    }
  }

  /** One server for one request, knowing its caller: tools it may use, the tenant's jobs at this moment. */
  function serverFor(principal: Principal, log: Logger): Server {
    const db = deps.tenantDb(principal.tenantId);
    const server = new Server({ name: 'flows', version: deps.version }, { capabilities: { tools: {}, resources: {} } });
    const jobTools = async () => (holdsScope(principal, 'runs:write') ? deps.jobs.invocable(db) : []);

    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [
        ...tools.filter((tool) => holdsScope(principal, tool.scope)).map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema })),
        ...(await jobTools()).map((job) => ({
          name: jobToolName(job.slug),
          description: `Run the job "${job.name}" (${job.slug}) with this data${job.description ? `: ${job.description}` : '.'}`,
          inputSchema: { ...job.inputSchema, type: 'object' as const },
        })),
      ],
    }));

    server.setRequestHandler(CallToolRequestSchema, async ({ params: { name, arguments: args = {} } }) => {
      const tool = tools.find((candidate) => candidate.name === name);
      if (tool) return callOperation(tool, principal, args, log);
      if (!name.startsWith('run_')) return toolError('not_found', `No tool named ${name}.`);
      if (!holdsScope(principal, 'runs:write')) return toolError('insufficient_scope', 'This tool requires the scope "runs:write".');
      const job = (await jobTools()).find((candidate) => jobToolName(candidate.slug) === name);
      if (!job) return toolError('not_found', `No tool named ${name}: no enabled job with an invocation trigger has that slug.`);
      try {
        const { body } = await deps.runs.invoke(db, job.id, { data: args });
        return { content: [{ type: 'text', text: `Run ${body.runId} of ${job.slug} is ${body.state}.` }], structuredContent: body };
      } catch (err) {
        return asToolError(err);
      }
    });

    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
      resourceTemplates: holdsScope(principal, 'runs:read')
        ? [
            { uriTemplate: 'flows://runs/{runId}', name: 'Run', description: 'A run: its state, prompt, result or error.', mimeType: 'application/json' },
            { uriTemplate: 'flows://runs/{runId}/trace', name: 'Run trace', description: `A run's trace as text, a line per event (its first ${TRACE_LIMIT}).`, mimeType: 'text/plain' },
          ]
        : [],
    }));

    server.setRequestHandler(ReadResourceRequestSchema, async ({ params: { uri } }) => {
      const match = RUN_URI.exec(uri);
      if (!match) throw new ValidationFailed(`${uri} is not a resource of this server.`);
      if (!holdsScope(principal, 'runs:read')) throw new ValidationFailed('Reading runs requires the scope "runs:read".');
      const runId = decodeURIComponent(match[1]);
      if (!match[2]) return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(await deps.runs.get(db, runId)) }] };
      const events = await deps.runs.trace(db, runId, { limit: TRACE_LIMIT });
      const text = events.map((event) => `${event.seq} ${event.at} ${event.type} ${JSON.stringify(event.data)}`).join('\n');
      return { contents: [{ uri, mimeType: 'text/plain', text }] };
    });
    return server;
  }

  return Router()
    .post('/mcp', express.json({ limit: '1mb' }), async (req, res, next) => {
      try {
        const principal = await authenticate(req);
        const server = serverFor(principal, req.log);
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
