// The server a command talks to and an SDK client signed in to it: --url, else FLOWS_URL, else the server
// of the last login. Tokens refresh on their own; the rotated pair is saved at once.
import { createFlows, FlowsApiError, type Flows } from '@flows/sdk';
import { readStore, updateServer } from './credentials';
import { CliError, EXIT } from './errors';

export const DEFAULT_URL = 'http://localhost:3000';

/** The origin of `url`, refusing what is not an http(s) URL. */
export function originOf(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.protocol === 'http:' || parsed.protocol === 'https:') return parsed.origin;
  } catch {
    // refused below
  }
  throw new CliError(`${url} is not an http(s) URL.`, EXIT.usage);
}

export const serverOf = (url: string | undefined) => originOf(url ?? process.env.FLOWS_URL ?? readStore().current ?? DEFAULT_URL);

export function signedIn(origin: string): Flows {
  const saved = readStore().servers[origin];
  if (!saved?.accessToken) throw new CliError(`Not signed in to ${origin}: run \`flows login --url ${origin}\`.`, EXIT.notLoggedIn);
  return createFlows({
    baseUrl: origin,
    refresh: {
      clientId: saved.clientId,
      tokens: { accessToken: saved.accessToken, refreshToken: saved.refreshToken, expiresAt: saved.expiresAt },
      onTokens: (tokens) => updateServer(origin, (current) => current && { ...current, ...tokens }),
    },
  });
}

/** An API failure in the CLI's words: the API's code and message, or the URL that could not be reached. */
export function asCliError(err: unknown, origin: string): unknown {
  if (!(err instanceof FlowsApiError)) return err;
  if (err.status === 401) return new CliError(`Your login to ${origin} has ended (${err.message}): run \`flows login --url ${origin}\`.`, EXIT.notLoggedIn);
  if (err.status === 0) return new CliError(err.message, EXIT.failure);
  return new CliError(`${err.code}: ${err.message}${err.requestId ? ` (request ${err.requestId})` : ''}`, EXIT.failure);
}
