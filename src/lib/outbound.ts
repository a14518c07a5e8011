// HTTP to the URLs tenants give (event endpoints, provider APIs), refusing non-public addresses
// (addresses.ts) unless the operator allows them. The guard sits where each connection is made: every
// address a name resolves to is checked then, so a name that pointed elsewhere when it was saved and
// resolves to 127.0.0.1 now (DNS rebinding) is refused, and so is every hop of a redirect, each a
// connection of its own. Node skips the lookup for a literal address, so the connector checks those itself.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import type * as Undici from 'undici';
import { nonPublicAddress, nonPublicHost } from './addresses';
import { ValidationFailed } from './errors';
import { clip } from './text';

const ALLOW = 'set FLOWS_ALLOW_PRIVATE_NETWORK=true to allow it';

/** A connection the guard did not make; its message says where the URL led and how to allow it. */
export class OutboundRefused extends Error {
  constructor(message: string) {
    super(`${message}; ${ALLOW}`);
    this.name = 'OutboundRefused';
  }
}

/** The refusal behind a failed fetch (undici wraps it as the cause of its `fetch failed`), or null. */
export function refusalOf(err: unknown): OutboundRefused | null {
  for (let at = err, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth++) {
    if (at instanceof OutboundRefused) return at;
  }
  return null;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup that fails when any address of the name is not public: one such address is enough to be led to. */
function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback) {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    for (const { address } of addresses) {
      const kind = nonPublicAddress(address);
      if (kind) return callback(new OutboundRefused(`${clip(hostname)} resolves to ${kind} (${address})`), []);
    }
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
}

function guardedConnector(undici: typeof Undici): Undici.buildConnector.connector {
  const connect = undici.buildConnector({ lookup: guardedLookup });
  return (options, callback) => {
    const kind = nonPublicHost(options.hostname);
    if (kind) return callback(new OutboundRefused(`${clip(options.hostname)} is ${kind}`), null);
    return connect(options, callback);
  };
}

// Loaded on the first call: undici costs about 20 MB and 50 ms, which a server that never calls out
// should not pay at start.
let undiciModule: Promise<typeof Undici> | undefined;
const loadUndici = () => (undiciModule ??= import('undici'));

export interface Outbound {
  /** fetch, through the guard (undici's own fetch, of the same version as the guard's agent). */
  fetch(url: string | URL, init?: Undici.RequestInit): Promise<Undici.Response>;
  /**
   * Why a URL plainly points into a private network (`localhost` or a non-public literal address), or null:
   * a quick answer when it is saved. Names are judged when a connection is made.
   */
  urlProblem(url: string): string | null;
}

export function createOutbound({ allowPrivateNetwork }: { allowPrivateNetwork: boolean }): Outbound {
  let dispatcher: Undici.Dispatcher | undefined;
  return {
    async fetch(url, init = {}) {
      const undici = await loadUndici();
      if (!allowPrivateNetwork) dispatcher ??= new undici.Agent({ connect: guardedConnector(undici) });
      return undici.fetch(url, { ...init, dispatcher });
    },
    urlProblem(url) {
      if (allowPrivateNetwork || !URL.canParse(url)) return null;
      const { hostname } = new URL(url);
      const name = hostname.replace(/\.$/, '');
      // RFC 6761: localhost and every name under it are this machine.
      if (name === 'localhost' || name.endsWith('.localhost')) return `points to this machine (${clip(hostname)}); ${ALLOW}`;
      const kind = nonPublicHost(hostname);
      return kind && `points to ${kind} (${hostname}); ${ALLOW}`;
    },
  };
}

/**
 * Provider APIs are spoken over HTTP(S) only, and not to this machine or a private network unless the
 * operator allows it: anything else is refused, naming the field.
 */
export function checkApiUrl(outbound: Pick<Outbound, 'urlProblem'>, value: string | undefined, field: string) {
  if (value === undefined) return;
  const url = URL.canParse(value) ? new URL(value) : null;
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.username || url.password) {
    throw new ValidationFailed(`\`${field}\` must be an http or https URL without credentials.`);
  }
  const problem = outbound.urlProblem(value);
  if (problem) throw new ValidationFailed(`\`${field}\` ${problem}.`);
}
