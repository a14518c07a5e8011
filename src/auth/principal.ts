import type { Account } from './accounts';

export const SCOPES = ['flows:read', 'flows:write', 'runs:read', 'runs:write'] as const;
export type Scope = (typeof SCOPES)[number];

/** Who is calling: an owner acting in one tenant, through a session cookie or a bearer token. */
export interface Principal extends Account {
  kind: 'session' | 'bearer';
  /** An owner session holds every scope; a bearer token holds the scopes it was granted. */
  scopes: ReadonlySet<Scope>;
  clientId: string | null;
}

/** What each scope allows, as the consent pages show it. */
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'flows:read': 'Read jobs, execution targets, connections, integrations and trigger availability',
  'flows:write': 'Create, change, enable, disable and delete jobs; test conditions and templates',
  'runs:read': 'Read runs and webhook activity',
  'runs:write': 'Invoke jobs and stop runs',
};

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

/** Whether the principal may do what needs `scope` (null: nothing beyond a valid credential). */
export const holdsScope = (principal: Principal, scope: string | null) => !scope || (isScope(scope) && principal.scopes.has(scope));
