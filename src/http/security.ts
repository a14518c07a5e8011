// Authentication and authorization of /api/v1 calls, driven by each operation's `security` in the contract:
// the scope it names, and whether only the owner session cookie is accepted.
import type { Request } from 'express';
import type { BearerVerifier } from '../auth/bearer-verifier';
import { holdsScope, type Principal } from '../auth/principal';
import { SESSION_COOKIE, type SessionService } from '../auth/session-service';
import { CrossSiteRequest, InsufficientScope, OwnerSessionRequired, Unauthenticated } from '../lib/errors';

export const RESOURCE_METADATA = '/.well-known/oauth-protected-resource';

/** Where the metadata of `resource` is published (RFC 9728 section 3.1): `<origin>/.well-known/oauth-protected-resource<path>`. */
export function metadataUrlOf(resource: string): string {
  const url = new URL(resource);
  return `${url.origin}${RESOURCE_METADATA}${url.pathname === '/' ? '' : url.pathname}`;
}

export interface Requirement {
  /** The scope the operation needs, or null when any valid credential will do. */
  scope: string | null;
  sessionOnly: boolean;
}

type SecurityRequirement = Record<string, string[]>;

export function requirementOf(security: SecurityRequirement[] | undefined): Requirement | null {
  if (!security || security.length === 0) return null;
  const schemes = security.flatMap((requirement) => Object.keys(requirement));
  const scope = security.flatMap((requirement) => Object.values(requirement).flat())[0] ?? null;
  return { scope, sessionOnly: schemes.every((name) => name === 'svc_session') };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether a cookie-carrying request comes from this service's own pages: its Origin is the service's, or
 * (when the browser sends none, or `Origin: null` from a privacy-sensitive context) Sec-Fetch-Site says
 * same-origin. A request that shows neither is refused: it cannot prove where it comes from.
 */
export function isSameOrigin(req: Request, baseUrl: URL): boolean {
  const origin = req.get('origin');
  if (origin && origin !== 'null') return origin === baseUrl.origin;
  return req.get('sec-fetch-site') === 'same-origin';
}

export interface Authorizer {
  authorize(req: Request, requirement: Requirement): Promise<Principal>;
}

export function createAuthorizer(deps: {
  sessions: SessionService;
  bearer: BearerVerifier;
  baseUrl: URL;
  /** The resource indicator API tokens must be bound to. */
  apiResource: string;
}): Authorizer {
  const metadata = metadataUrlOf(deps.apiResource);
  const challenge = (extra = '') => `Bearer realm="flows"${extra}, resource_metadata="${metadata}"`;

  async function fromBearer(token: string, requirement: Requirement): Promise<Principal> {
    const verdict = await deps.bearer.check(token, deps.apiResource);
    if (!verdict.ok && verdict.reason === 'other_resource') {
      throw new Unauthenticated(
        'invalid_token',
        `The access token is bound to another resource (${verdict.boundTo.join(', ')}); this API takes tokens issued for ${deps.apiResource} (ask with resource=${deps.apiResource}).`,
        challenge(', error="invalid_token", error_description="The access token is bound to another resource"'),
      );
    }
    if (!verdict.ok) throw new Unauthenticated('invalid_token', 'The access token is invalid, expired or revoked.', challenge(', error="invalid_token"'));
    const { principal } = verdict;
    if (requirement.sessionOnly) throw new OwnerSessionRequired();
    if (requirement.scope && !holdsScope(principal, requirement.scope)) {
      throw new InsufficientScope(requirement.scope, challenge(`, error="insufficient_scope", scope="${requirement.scope}"`));
    }
    return principal;
  }

  async function fromSession(token: string, req: Request): Promise<Principal> {
    const principal = await deps.sessions.authenticate(token);
    if (!principal) throw new Unauthenticated('invalid_session', 'The session has ended; sign in again.', challenge());
    if (!SAFE_METHODS.has(req.method) && !isSameOrigin(req, deps.baseUrl)) throw new CrossSiteRequest();
    return principal;
  }

  return {
    async authorize(req, requirement) {
      const authorization = req.get('authorization');
      if (authorization !== undefined) {
        const match = /^Bearer ([\x21-\x7e]+)$/i.exec(authorization.trim());
        if (!match) {
          throw new Unauthenticated('invalid_token', 'The Authorization header must be "Bearer <access token>".', challenge(', error="invalid_request"'));
        }
        return fromBearer(match[1], requirement);
      }
      const cookie = req.signedCookies?.[SESSION_COOKIE];
      if (typeof cookie === 'string') return fromSession(cookie, req);
      if (req.cookies?.[SESSION_COOKIE] !== undefined || req.signedCookies?.[SESSION_COOKIE] === false) {
        throw new Unauthenticated('invalid_session', 'The session cookie is not valid; sign in again.', challenge());
      }
      throw new Unauthenticated('unauthenticated', 'Authenticate with a bearer token or an owner session.', challenge());
    },
  };
}
