// Bearer authentication as openapi-fetch middleware. With a refresh token the access token is renewed at
// the server's own OAuth token endpoint shortly before it expires, and once more when an answer is 401 (a
// token revoked or expired early), after which that request is sent again, once.
import type { Middleware } from 'openapi-fetch';
import { answerError, networkError } from './errors';

export interface Tokens {
  accessToken: string;
  refreshToken?: string;
  /** When the access token expires, in milliseconds since the epoch. */
  expiresAt?: number;
}

export interface RefreshOptions {
  /** The OAuth client the tokens were issued to (a public client: no secret). */
  clientId: string;
  tokens: Tokens;
  /** Called with every new pair; refresh tokens rotate, so the pair must be stored to be used again. */
  onTokens?(tokens: Tokens): void | Promise<void>;
}

/** Renew this long before `expiresAt`, so a token cannot expire between the check and its use. */
const EARLY_MS = 60_000;

interface TokenAnswer {
  access_token?: unknown;
  refresh_token?: unknown;
  expires_in?: unknown;
}

/** The current tokens, renewed one exchange at a time: a spent refresh token sent twice ends the grant. */
class TokenKeeper {
  private tokens: Tokens;
  private renewing: Promise<void> | undefined;

  constructor(
    private readonly tokenUrl: string,
    private readonly fetch: typeof globalThis.fetch,
    private readonly options: RefreshOptions,
  ) {
    this.tokens = { ...options.tokens };
  }

  get accessToken(): string {
    return this.tokens.accessToken;
  }

  get canRenew(): boolean {
    return this.tokens.refreshToken !== undefined;
  }

  /** The access token to send now, renewed first when it is about to expire. */
  async current(): Promise<string> {
    const { expiresAt } = this.tokens;
    if (this.canRenew && expiresAt !== undefined && expiresAt - Date.now() < EARLY_MS) await this.renew();
    return this.tokens.accessToken;
  }

  /** Renews the pair; callers that ask while an exchange is under way wait for that one. */
  renew(): Promise<void> {
    this.renewing ??= this.exchange().finally(() => {
      this.renewing = undefined;
    });
    return this.renewing;
  }

  private async exchange(): Promise<void> {
    const { clientId, onTokens } = this.options;
    // Called unbound, as openapi-fetch calls it: a browser's fetch refuses any other `this`.
    const fetch = this.fetch;
    let response: Response;
    try {
      response = await fetch(this.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({ grant_type: 'refresh_token', client_id: clientId, refresh_token: this.tokens.refreshToken ?? '' }),
      });
    } catch (cause) {
      throw networkError(this.tokenUrl, cause);
    }
    const body = (await response.json().catch(() => null)) as TokenAnswer | null;
    if (!response.ok || typeof body?.access_token !== 'string') throw answerError(response, body);
    this.tokens = {
      accessToken: body.access_token,
      // A server that does not rotate answers no refresh token: the current one stays good.
      refreshToken: typeof body.refresh_token === 'string' ? body.refresh_token : this.tokens.refreshToken,
      expiresAt: typeof body.expires_in === 'number' ? Date.now() + body.expires_in * 1000 : undefined,
    };
    await onTokens?.({ ...this.tokens });
  }
}

const bearer = (token: string) => `Bearer ${token}`;

/** Sends a fixed access token. */
export function staticAuth(accessToken: string): Middleware {
  return {
    onRequest({ request }) {
      request.headers.set('authorization', bearer(accessToken));
    },
  };
}

/** Sends the kept access token, renewing it before expiry and once after a 401, then retrying once. */
export function refreshingAuth(origin: string, fetch: typeof globalThis.fetch, options: RefreshOptions): Middleware {
  const keeper = new TokenKeeper(`${origin}/oauth/token`, fetch, options);
  // A request's body can be sent only once; the copy made before sending is what a retry sends.
  const copies = new Map<string, Request>();

  return {
    async onRequest({ request, id }) {
      request.headers.set('authorization', bearer(await keeper.current()));
      copies.set(id, request.clone());
    },
    async onResponse({ request, response, id }) {
      const copy = copies.get(id);
      copies.delete(id);
      if (response.status !== 401 || !copy || !keeper.canRenew) return undefined;
      // Another request may have renewed the token while this one was out: then its token is already new.
      if (request.headers.get('authorization') === bearer(keeper.accessToken)) await keeper.renew();
      await response.body?.cancel();
      copy.headers.set('authorization', bearer(keeper.accessToken));
      try {
        return await fetch(copy);
      } catch (cause) {
        throw networkError(copy.url, cause);
      }
    },
    onError({ id }) {
      copies.delete(id);
    },
  };
}
