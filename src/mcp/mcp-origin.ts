// DNS rebinding: a page on another site whose name its owner points at this server's address must not reach
// /mcp (MCP transport specification, Streamable HTTP "Security Warning": validate `Origin`, answer 403). A
// browser names the page's origin in `Origin` and the name it connected to in `Host`; both must be this
// service's. Clients that are not browsers (CLIs, agents, other servers) send no `Origin`.
import type { RequestHandler } from 'express';
import { AppError } from '../lib/errors';

export class ForbiddenOrigin extends AppError {
  constructor(message: string) {
    super(403, 'forbidden_origin', message);
  }
}

const LOOPBACK_HOSTNAMES = ['localhost', '127.0.0.1', '[::1]'];

export interface AllowedCallers {
  /** Origins whose pages may call: BASE_URL's and those the operator adds. */
  origins: string[];
  /** Names the server is reached by, whatever the port: BASE_URL's, loopback and the added origins' hosts. */
  hostnames: string[];
}

export function allowedCallers(baseUrl: URL, extraOrigins: string[]): AllowedCallers {
  const origins = [baseUrl.origin, ...extraOrigins];
  return { origins, hostnames: [...new Set([...LOOPBACK_HOSTNAMES, ...origins.map((origin) => new URL(origin).hostname)])] };
}

/** Why a request with this `Host` and `Origin` is refused, or null. */
export function callerProblem(host: string | undefined, origin: string | undefined, allowed: AllowedCallers): string | null {
  let hostname: string | null = null;
  try {
    hostname = host && /^[^/?#@\s]+$/.test(host) ? new URL(`http://${host}`).hostname : null;
  } catch {
    // refused below
  }
  if (!hostname || !allowed.hostnames.includes(hostname)) return 'The Host header does not name this server.';
  if (origin !== undefined && !allowed.origins.includes(origin)) return 'Requests from this Origin are not allowed; see FLOWS_MCP_ALLOWED_ORIGINS.';
  return null;
}

/** Refuses with 403 `forbidden_origin` what `callerProblem` refuses. */
export function checkCaller(allowed: AllowedCallers): RequestHandler {
  return (req, _res, next) => {
    const problem = callerProblem(req.get('host'), req.get('origin'), allowed);
    next(problem ? new ForbiddenOrigin(problem) : undefined);
  };
}
