// What a sandboxed agent may connect to, apart from the proxy that enforces it (egress-proxy.ts): a mode, and for `allowlist`
// the domains. Whatever the mode, a name is judged by every address it resolves to, and no address of this
// machine, its private network or its cloud's metadata service is ever let through (addresses.ts).
import { isIP } from 'node:net';
import { nonPublicAddress } from './addresses';

/** `none`: no way out. `allowlist`: the listed domains only. `public`: any public address (the default). */
export type NetworkMode = 'none' | 'allowlist' | 'public';

export interface EgressPolicy {
  mode: NetworkMode;
  /** `api.anthropic.com`, or `*.npmjs.org` for every name under it (not the domain itself). */
  allow: string[];
  /** The job's own allowlist, within the target's policy: it narrows, never widens. */
  narrowedTo?: string[] | null;
}

/** A domain pattern as the operator writes it: lower case, no trailing dot, `*.` only as a prefix. */
export function domainProblem(pattern: string): string | null {
  const name = pattern.startsWith('*.') ? pattern.slice(2) : pattern;
  if (isIP(name)) return `${pattern} is an address; name a domain`;
  if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(name)) return `${pattern} is not a domain name (lower case, * only as the first label)`;
  return null;
}

/** The first domain of `allow` that is not one, as a message naming its place in `field`; or null. */
export function allowListProblem(allow: readonly string[], field: string): string | null {
  for (const [index, domain] of allow.entries()) {
    const problem = domainProblem(domain);
    if (problem) return `\`${field}[${index}]\`: ${problem}.`;
  }
  return null;
}

const bare = (host: string) => host.toLowerCase().replace(/\.$/, '');

/** Whether `host` (a name or a literal address) is on the allowlist: exactly, or under a `*.` pattern. */
export function allowListed(allow: readonly string[], host: string): boolean {
  const name = bare(host);
  return allow.some((pattern) => (pattern.startsWith('*.') ? name.endsWith(pattern.slice(1)) : name === pattern));
}

/** Why the policy refuses `host` before any lookup, or null: the mode, the allowlist, `localhost`. */
export function hostRefusal(policy: EgressPolicy, host: string): string | null {
  const name = bare(host);
  if (policy.mode === 'none') return 'the network is off for this target';
  if (policy.mode === 'allowlist' && !allowListed(policy.allow, name)) return 'not on the allowlist';
  if (policy.narrowedTo && !allowListed(policy.narrowedTo, name)) return "not on the job's allowlist";
  // RFC 6761: localhost and every name under it are this machine, whatever a resolver says.
  if (name === 'localhost' || name.endsWith('.localhost')) return 'this machine';
  return null;
}

/**
 * Why one of the addresses `host` resolved to is refused, or null when every one is public. One non-public
 * address is enough to refuse: a name that resolves to both could be answered either way at connect time.
 */
export function addressRefusal(addresses: readonly string[], isPublic: (address: string) => boolean = (address) => !nonPublicAddress(address)): string | null {
  if (addresses.length === 0) return 'the name does not resolve';
  const refused = addresses.find((address) => !isPublic(address));
  return refused === undefined ? null : `${nonPublicAddress(refused) ?? 'a refused address'} (${refused})`;
}

/** How an agent finds its egress proxy: the variables HTTP clients read, in both spellings, and what stays off it. */
export function proxyVariables(proxy: string, noProxy: readonly string[]): Record<string, string> {
  const none = noProxy.join(',');
  return { HTTP_PROXY: proxy, HTTPS_PROXY: proxy, http_proxy: proxy, https_proxy: proxy, NO_PROXY: none, no_proxy: none };
}
