// Runs as MCP resources: `resources/list` names the tenant's runs, newest first, a page at a time; a run
// (JSON) and its trace (text) are read by URI, as the templates spell them. A URI that names no run of the
// tenant is MCP's "Resource not found".
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, McpError, ReadResourceRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { TenantDb } from '../db/tenant-scope';
import { keysetCursor, keysetRequest } from '../http/pagination';
import { AppError, NotFound } from '../lib/errors';
import { clip } from '../lib/text';
import type { RunsService } from '../runs/runs-service';

/** The specification's code for a resource that does not exist (server/resources, "Error Handling"). */
export const RESOURCE_NOT_FOUND = -32002;

const RUN_URI = /^flows:\/\/runs\/([^/]+)(\/trace)?$/;
const TRACE_LIMIT = 1000;
const PAGE_SIZE = 50;
const LIST = 'mcp:runs';

export interface RunResourcesDeps {
  db: TenantDb;
  runs: Pick<RunsService, 'list' | 'get' | 'trace'>;
  /** Whether the caller holds `runs:read`; without it there are no resources. */
  readable: boolean;
  /** An unexpected failure as the caller may see it: logged, its detail kept from the answer. */
  internal(err: unknown): McpError;
}

const notFound = (uri: string) => new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${clip(uri)} names no run of this tenant.`, { uri });

/** A missing run is a missing resource; what the API refuses as a request, invalid parameters. */
function asMcpError(err: unknown, deps: RunResourcesDeps, uri?: string): McpError {
  if (err instanceof McpError) return err;
  if (err instanceof NotFound && uri !== undefined) return notFound(uri);
  if (err instanceof AppError && err.expose && err.status < 500) return new McpError(ErrorCode.InvalidParams, err.message);
  return deps.internal(err);
}

async function read(uri: string, { db, runs, readable }: RunResourcesDeps) {
  if (!readable) throw new McpError(ErrorCode.InvalidRequest, 'Reading runs requires the scope "runs:read".');
  const match = RUN_URI.exec(uri);
  let runId: string | null = null;
  try {
    runId = match && decodeURIComponent(match[1]);
  } catch {
    // a malformed escape names no run
  }
  if (!match || !runId) throw notFound(uri);
  if (!match[2]) return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(await runs.get(db, runId)) }] };
  const events = await runs.trace(db, runId, { limit: TRACE_LIMIT });
  const text = events.map((event) => `${event.seq} ${event.at} ${event.type} ${JSON.stringify(event.data)}`).join('\n');
  return { contents: [{ uri, mimeType: 'text/plain', text }] };
}

export function serveRunResources(server: Server, deps: RunResourcesDeps): void {
  const { db, runs, readable } = deps;

  server.setRequestHandler(ListResourcesRequestSchema, async ({ params }) => {
    if (!readable) return { resources: [] };
    try {
      const request = keysetRequest<string>(LIST, { limit: PAGE_SIZE, cursor: params?.cursor }, 'string');
      const rows = await runs.list(db, request, {});
      const page = rows.slice(0, PAGE_SIZE);
      return {
        resources: page.map((run) => ({
          uri: `flows://runs/${encodeURIComponent(run.id)}`,
          name: run.name || run.id,
          description: `A run of the job ${run.jobId}, ${run.state}; created ${run.createdAt}.`,
          mimeType: 'application/json',
        })),
        ...(rows.length > PAGE_SIZE ? { nextCursor: keysetCursor(LIST, page[page.length - 1].id) } : {}),
      };
    } catch (err) {
      throw asMcpError(err, deps);
    }
  });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: readable
      ? [
          { uriTemplate: 'flows://runs/{runId}', name: 'Run', description: 'A run: its state, prompt, result or error.', mimeType: 'application/json' },
          { uriTemplate: 'flows://runs/{runId}/trace', name: 'Run trace', description: `A run's trace as text, a line per event (its first ${TRACE_LIMIT}).`, mimeType: 'text/plain' },
        ]
      : [],
  }));

  server.setRequestHandler(ReadResourceRequestSchema, async ({ params: { uri } }) => {
    try {
      return await read(uri, deps);
    } catch (err) {
      throw asMcpError(err, deps, uri);
    }
  });
}
