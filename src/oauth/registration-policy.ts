// What dynamic client registration accepts beyond the library's own checks (which only run policies
// for registrations with an initial access token).
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

const GRANTS = new Set(['authorization_code', 'refresh_token', DEVICE_CODE_GRANT]);
/** How clients authenticate at the token, revocation and introspection endpoints (`none`: public clients). */
export const CLIENT_AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const;
const AUTH_METHODS: ReadonlySet<string> = new Set(CLIENT_AUTH_METHODS);

const MAX_CLIENT_NAME = 120;

interface ClientMetadata {
  client_name?: string;
  grant_types?: readonly string[];
  response_types?: readonly string[];
  token_endpoint_auth_method?: string;
}

/** The problem with the metadata, in words for the `invalid_client_metadata` answer, or null. */
export function checkRegistration(metadata: ClientMetadata): string | null {
  const grants = metadata.grant_types ?? [];
  const method = metadata.token_endpoint_auth_method ?? 'client_secret_basic';
  const unknown = grants.find((grant) => !GRANTS.has(grant));
  if (unknown) return `grant_types may only contain authorization_code, refresh_token and ${DEVICE_CODE_GRANT}; ${unknown} is not offered`;
  if (!AUTH_METHODS.has(method)) return 'token_endpoint_auth_method must be none (public clients), client_secret_basic or client_secret_post';
  if (grants.includes(DEVICE_CODE_GRANT) && method !== 'none') {
    return `a client using ${DEVICE_CODE_GRANT} is a public client: token_endpoint_auth_method must be none`;
  }
  if ((metadata.client_name?.length ?? 0) > MAX_CLIENT_NAME) return `client_name must have at most ${MAX_CLIENT_NAME} characters`;
  if ((metadata.response_types ?? []).some((type) => type !== 'code')) return 'response_types may only contain code (implicit and hybrid flows are not offered)';
  return null;
}
