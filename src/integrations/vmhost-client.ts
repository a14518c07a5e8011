// HTTP clients of the provider APIs of openapi/providers.yaml: the VM host and the coding-agent provider.
// Errors name the call and the status, never the token; every call has a deadline and goes through the
// outbound guard (a base URL on a private address is refused); text the provider sends back (errors,
// details, agent output) has the token blanked out, should a provider echo it.
import { refusalOf, type Outbound } from '../lib/outbound';
import { clip } from '../lib/text';
import type { ProviderRepository } from '../lib/provider-repository';

export class ProviderError extends Error {
  constructor(
    message: string,
    /** A 5xx, 429 or no answer: worth another try. Anything else will not change by trying again. */
    readonly transient = false,
  ) {
    super(message);
  }
}

/** What a run or a diagnostics step says of a failure: a provider error's own message (ours, its quotes clipped), nothing of others. */
export const failureOf = (err: unknown) => (err instanceof ProviderError ? err.message : 'unexpected failure');

const CALL_TIMEOUT_MS = 15_000;

export interface ClientOptions {
  /** The guarded fetch every call goes through. */
  fetch: Outbound['fetch'];
  /** How long one call may wait for its answer. */
  callTimeoutMs?: number;
}

/** `text` with every occurrence of the token blanked out. */
const redact = (text: string, token: string) => (token && text.includes(token) ? text.split(token).join('[redacted]') : text);

/** A JSON value with the token blanked out of every string in it, keys included. */
function redactJson<T>(value: T, token: string): T {
  const json = JSON.stringify(value);
  const escaped = JSON.stringify(token).slice(1, -1); // the token as it reads inside a JSON string
  return json !== undefined && token && json.includes(escaped) ? JSON.parse(redact(json, escaped)) : value;
}

async function call<T>(base: string, token: string, method: string, path: string, body: unknown, what: string, { fetch, callTimeoutMs = CALL_TIMEOUT_MS }: ClientOptions): Promise<{ status: number; body: T }> {
  let res: Awaited<ReturnType<ClientOptions['fetch']>>;
  let text: string;
  try {
    res = await fetch(new URL(path.replace(/^\//, ''), base.endsWith('/') ? base : `${base}/`), {
      method,
      headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(callTimeoutMs),
    });
    text = await res.text();
  } catch (err) {
    // Refused by the guard: no use trying again until the operator allows private addresses.
    const refused = refusalOf(err);
    if (refused) throw new ProviderError(`${what}: ${refused.message}`);
    throw new ProviderError(`${what}: no answer (${(err as Error).name === 'TimeoutError' ? 'timed out' : 'connection failed'})`, true);
  }
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: handled by the status check or the caller's shape check
  }
  return { status: res.status, body: parsed as T };
}

function expect2xx<T>(answer: { status: number; body: T }, what: string): T {
  if (answer.status < 200 || answer.status >= 300) throw new ProviderError(`${what}: the provider answered ${answer.status}`, answer.status >= 500 || answer.status === 429);
  return answer.body;
}

export interface Vm {
  id: string;
  status: 'booting' | 'ready' | 'failed';
}

export function vmhostClient(base: string, token: string, options: ClientOptions) {
  const request = <T>(method: string, path: string, body: unknown, what: string) => call<T>(base, token, method, path, body, what, options);
  return {
    permissions: async () => expect2xx(await request<{ permissions?: unknown }>('GET', '/v1/token', undefined, 'checking the token'), 'checking the token').permissions,
    createVm: async (input: { name: string; image: string; size?: string | null; region?: string | null }) => {
      const vm = expect2xx(await request<Vm>('POST', '/v1/vms', input, 'booting a VM'), 'booting a VM');
      if (!vm || typeof vm.id !== 'string') throw new ProviderError('booting a VM: the provider answered no VM id');
      return vm;
    },
    getVm: async (id: string) => expect2xx(await request<Vm>('GET', `/v1/vms/${encodeURIComponent(id)}`, undefined, 'reading the VM'), 'reading the VM'),
    /** Idempotent: a VM that is already gone counts as destroyed. */
    destroyVm: async (id: string) => {
      const answer = await request('DELETE', `/v1/vms/${encodeURIComponent(id)}`, undefined, 'destroying the VM');
      if (answer.status !== 404) expect2xx(answer, 'destroying the VM');
    },
  };
}

export interface SessionOutput {
  state: 'running' | 'succeeded' | 'failed';
  output: { seq: number; stream: 'stdout' | 'stderr'; text: string }[];
  result?: Record<string, unknown>;
  error?: string;
}

export function agentClient(base: string, token: string, options: ClientOptions) {
  const request = <T>(method: string, path: string, body: unknown, what: string) => call<T>(base, token, method, path, body, what, options);
  const text = (value: unknown) => (typeof value === 'string' ? redact(value, token) : undefined);
  return {
    start: async (input: { project: string; vmId: string; prompt: string; model?: string; effort?: string; env?: Record<string, string>; repository?: ProviderRepository | null }) => {
      const session = expect2xx(await request<{ id?: unknown }>('POST', '/v1/sessions', input, 'starting the agent'), 'starting the agent');
      if (typeof session?.id !== 'string') throw new ProviderError('starting the agent: the provider answered no session id');
      return session.id;
    },
    output: async (sessionId: string, after: number): Promise<SessionOutput> => {
      const out = expect2xx(await request<SessionOutput>('GET', `/v1/sessions/${encodeURIComponent(sessionId)}/output?after=${after}`, undefined, 'reading the agent output'), 'reading the agent output');
      if (!out || !Array.isArray(out.output) || !['running', 'succeeded', 'failed'].includes(out.state)) throw new ProviderError('reading the agent output: unexpected answer');
      return { ...out, output: out.output.map((line) => ({ ...line, text: text(String(line.text)) ?? '' })), error: text(out.error), result: out.result && redactJson(out.result, token) };
    },
    cancel: async (sessionId: string) => {
      await request('POST', `/v1/sessions/${encodeURIComponent(sessionId)}/cancel`, {}, 'stopping the agent').catch(() => {});
    },
    probe: async (input: { project: string; vmId: string }) => {
      const answer = expect2xx(await request<{ ok?: unknown; model?: unknown; detail?: unknown }>('POST', '/v1/probe', input, 'probing the model'), 'probing the model');
      const model = text(answer?.model);
      const detail = text(answer?.detail);
      return { ok: answer?.ok === true, model: model === undefined ? null : clip(model), detail: detail === undefined ? null : clip(detail) };
    },
  };
}
