// The OAuth 2 authorization server (node-oidc-provider): dynamic client registration, the device flow,
// authorization code with PKCE S256, rotating refresh tokens, revocation and introspection. Access tokens
// are opaque, bound to one resource (the API or the MCP endpoint) and to one owner in one tenant.
import Provider, { errors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { isCurrent, parseAccountId } from '../auth/accounts';
import { ACCESS_TOKEN_TTL, DEVICE_CODE_TTL, POLLING_INTERVAL, PROVIDER_SESSION_TTL, REFRESH_TOKEN_LIFETIME } from '../auth/lifetimes';
import { SCOPES } from '../auth/principal';
import type { Db } from '../db/client';
import type { RateLimits } from '../http/rate-limit';
import { newId } from '../lib/ids';
import { deriveKey, signingJwk } from '../lib/keys';
import { prismaAdapterFactory } from './adapter';
import { resourcesOf } from './resources';
import { deviceConfirmPage, deviceInputPage, deviceSuccessPage, oauthErrorPage } from './device-pages';
import { CLIENT_AUTH_METHODS, checkRegistration, DEVICE_CODE_GRANT } from './registration-policy';
import { OFFERED_SCOPES, refuseUnofferedScopes } from './scopes';
import { giveBackMatchedCodes } from './user-code-guesses';

export const ROUTES = {
  registration: '/oauth/register',
  device_authorization: '/oauth/device_authorization',
  token: '/oauth/token',
  revocation: '/oauth/revoke',
  introspection: '/oauth/introspect',
  authorization: '/oauth/auth',
  jwks: '/oauth/jwks',
  code_verification: '/device',
};

const HOUR = 60 * 60;

export interface ProviderDeps {
  baseUrl: URL;
  secretKey: Buffer;
  db: Db;
  limits: RateLimits;
  /** Behind a TLS-terminating proxy: take the client address and protocol from X-Forwarded-*. */
  trustProxy: boolean;
}

export function createProvider({ baseUrl, secretKey, db, limits, trustProxy }: ProviderDeps): Provider {
  const resources = resourcesOf(baseUrl);
  const epoch = () => Math.floor(Date.now() / 1000);

  const configuration: Configuration = {
    adapter: prismaAdapterFactory(db),
    clients: [],
    jwks: { keys: [signingJwk(secretKey)] },
    cookies: { keys: [deriveKey(secretKey, 'oauth cookies').toString('base64url')] },
    routes: ROUTES,
    scopes: [...OFFERED_SCOPES],
    // The library's hook for checking a parameter of the authorization and device authorization requests,
    // used for a standard one: a scope the server does not offer is refused at once.
    extraParams: { scope: (_ctx, scope) => refuseUnofferedScopes(scope as string | undefined) },
    claims: { openid: ['sub'] },
    responseTypes: ['code'],
    clientAuthMethods: [...CLIENT_AUTH_METHODS],
    pkce: { required: () => true },
    clientDefaults: { id_token_signed_response_alg: 'ES256', grant_types: ['authorization_code'], response_types: ['code'] },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true, idFactory: () => newId('cli') },
      revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => client.clientId === token.clientId },
      introspection: { enabled: true, allowedPolicy: async (_ctx, client, token) => client.clientId === token.clientId },
      userinfo: { enabled: false },
      // Not offered: each would need routes, pages or token handling this service does not provide.
      pushedAuthorizationRequests: { enabled: false },
      dPoP: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      deviceFlow: {
        enabled: true,
        charset: 'base-20',
        mask: '****-****',
        userCodeInputSource: deviceInputPage,
        userCodeConfirmSource: deviceConfirmPage,
        successSource: deviceSuccessPage,
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resources.api,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          if (resource !== resources.api && resource !== resources.mcp) throw new errors.InvalidTarget();
          return { scope: SCOPES.join(' '), accessTokenFormat: 'opaque', accessTokenTTL: ACCESS_TOKEN_TTL };
        },
      },
    },
    extraClientMetadata: {
      properties: ['software_id'],
      validator: (_ctx, key, _value, metadata) => {
        if (key !== 'software_id') return;
        const problem = checkRegistration(metadata);
        if (problem) throw new errors.InvalidClientMetadata(problem);
      },
    },
    // Every exchange (code, device code, refresh) lands here: the account must still hold. At the end of
    // an approval it may have just stopped holding (a sign-out everywhere racing it): the client is told
    // access_denied, where the library would otherwise fail on the missing account.
    findAccount: async (ctx, sub) => {
      const account = parseAccountId(sub);
      if (account && (await isCurrent(db, account))) return { accountId: sub, claims: () => ({ sub }) };
      if (ctx.oidc.route === 'resume' || ctx.oidc.route === 'device_resume') {
        throw new errors.AccessDenied('the owner signed out everywhere or left the tenant while approving');
      }
      return undefined;
    },
    // Only the grant made in this very interaction counts: consent is asked every time, so that a grant is
    // always made for the tenant the owner is signed in to now.
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // Tokens live by their own lifetimes, not the browser's provider session: otherwise a second approval
    // of the same client in the same browser, or that session's expiry, would silently end earlier tokens.
    // They end by revocation, sign-out everywhere or lost membership (findAccount and the bearer check).
    expiresWithSession: async () => false,
    rotateRefreshToken: true,
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL,
      AuthorizationCode: 60,
      DeviceCode: DEVICE_CODE_TTL,
      Grant: REFRESH_TOKEN_LIFETIME,
      IdToken: HOUR,
      Interaction: HOUR,
      Session: PROVIDER_SESSION_TTL,
      // A rotated refresh token inherits what is left of the first one's 30 days.
      RefreshToken: (_ctx, token) => Math.max(1, REFRESH_TOKEN_LIFETIME - (epoch() - (token.iiat ?? epoch()))),
    },
    renderError: oauthErrorPage,
  };

  const provider = new Provider(baseUrl.origin, configuration);
  provider.proxy = trustProxy;
  provider.use(devicePolling(limits));
  provider.use(introspectionRecheck(db));
  provider.use(clientAuthAtEveryEndpoint);
  provider.use(giveBackMatchedCodes(limits));
  return provider;
}

/**
 * RFC 8628 details the library leaves out: the device authorization answer carries `interval`, and a
 * client polling sooner than its interval gets `slow_down` (its interval then grows by 5 seconds).
 */
function devicePolling(limits: RateLimits) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    await next();
    const route = ctx.oidc?.route;
    if (route === 'device_authorization' && ctx.status === 200 && ctx.body && typeof ctx.body === 'object') {
      (ctx.body as Record<string, unknown>).interval = POLLING_INTERVAL;
      return;
    }
    const params = ctx.oidc?.params as Record<string, unknown> | undefined;
    if (route !== 'token' || params?.grant_type !== DEVICE_CODE_GRANT || typeof params.device_code !== 'string') return;
    const verdict = await limits.poll(params.device_code, POLLING_INTERVAL);
    const body = ctx.body as { error?: string } | undefined;
    if (verdict === 'slow_down' && body?.error === 'authorization_pending') {
      ctx.body = { error: 'slow_down', error_description: 'you are polling too quickly; wait the interval, now 5 seconds longer' };
    }
  };
}

/**
 * Revocation and introspection take the same client authentication as the token endpoint (a public client
 * uses `none`), which discovery must say: without these fields RFC 8414 means client_secret_basic only.
 */
async function clientAuthAtEveryEndpoint(ctx: KoaContextWithOIDC, next: () => Promise<void>) {
  await next();
  if (ctx.oidc?.route !== 'discovery' || ctx.status !== 200 || !ctx.body || typeof ctx.body !== 'object') return;
  const body = ctx.body as Record<string, unknown>;
  body.revocation_endpoint_auth_methods_supported = [...CLIENT_AUTH_METHODS];
  body.introspection_endpoint_auth_methods_supported = [...CLIENT_AUTH_METHODS];
}

/** Introspection tells the truth the API tells: a token whose owner left the tenant or signed out everywhere is inactive. */
function introspectionRecheck(db: Db) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    await next();
    const body = ctx.body as { active?: boolean; sub?: string } | undefined;
    if (ctx.oidc?.route !== 'introspection' || !body?.active) return;
    const account = parseAccountId(body.sub);
    if (!account || !(await isCurrent(db, account))) ctx.body = { active: false };
  };
}
