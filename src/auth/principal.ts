export const SCOPES = ['flows:read', 'flows:write', 'runs:read', 'runs:write'] as const;
export type Scope = (typeof SCOPES)[number];

/** Who is calling: an owner acting in one tenant, through a session cookie or a bearer token. */
export interface Principal {
  kind: 'session' | 'bearer';
  ownerId: string;
  tenantId: string;
  /** An owner session holds every scope; a bearer token holds the scopes it was granted. */
  scopes: ReadonlySet<Scope>;
  clientId: string | null;
}

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);
