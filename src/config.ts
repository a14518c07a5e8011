// The only reader of the environment. Every variable is documented in the README.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { agentBinVariable, STREAM_KINDS, type StreamKind } from './lib/agent-clis';
import { pricesProblem, type ModelPrices } from './lib/model-prices';
import { projectRoot } from './lib/paths';
import { domainProblem, type NetworkMode } from './lib/egress-policy';
import { DEFAULT_LIMITS, type ResourceLimits } from './lib/resource-limits';

export type DatabaseProvider = 'sqlite' | 'postgresql';

export interface Config {
  port: number;
  host: string;
  /** The public origin, e.g. https://flows.example.com; links, cookies and the OAuth issuer derive from it. */
  baseUrl: URL;
  databaseUrl: string;
  databaseProvider: DatabaseProvider;
  logLevel: string;
  /** `pretty`: lines for a person; `json`: JSON lines. */
  logFormat: 'pretty' | 'json';
  /** 32 bytes: encryption of stored secrets and signing of session cookies (separate keys derive from it). */
  secretKey: Buffer;
  /** Keys stored secrets may still be sealed with, after FLOWS_SECRET_KEY changed (until `npm run secrets:reseal`). */
  previousSecretKeys: Buffer[];
  migrateOnStart: boolean;
  trustProxy: boolean;
  /** FLOWS_SIGNUP=open lets anyone create an owner account at /signup. */
  signupOpen: boolean;
  /** Created on start when no owner exists yet. */
  bootstrapOwner: { email: string; password: string } | null;
  /** API requests allowed per minute, per credential and per client address; 0 turns a limit off. */
  rateLimits: { api: number; apiAddress: number };
  /** The agent command of the built-in `local` execution target; null when the operator set none. */
  localAgent: LocalAgent | null;
  /** The Docker host of `docker` targets and the images they may use; null: no `docker` targets. */
  docker: DockerHost | null;
  /**
   * FLOWS_ALLOW_PRIVATE_NETWORK=true lets event endpoints and provider APIs be on loopback, private, link-local
   * and other non-public addresses; off, a tenant's URL cannot reach this machine or its network.
   */
  allowPrivateNetwork: boolean;
  /**
   * Seconds without a heartbeat after which an instance counts as gone and the others end its active runs
   * (FLOWS_INSTANCE_LAPSE_SECONDS); instances beat a third of it.
   */
  instanceLapseSeconds: number;
  /**
   * How long finished runs (with their traces), webhook activity and finished event deliveries are kept
   * (FLOWS_RETENTION_DAYS), and how many finished runs per job at most (FLOWS_RETENTION_MAX_RUNS_PER_JOB);
   * 0 keeps them all.
   */
  retention: { days: number; maxRunsPerJob: number };
  /**
   * The cache of repositories runs clone (FLOWS_REPOSITORY_CACHE_DIR, FLOWS_REPOSITORY_CACHE_MB): a mirror per
   * tenant and repository, within its size; null when FLOWS_REPOSITORY_CACHE_MB is 0.
   */
  repositoryCache: { dir: string; maxMb: number } | null;
  /**
   * Where /metrics is served: on the main port to a bearer of FLOWS_METRICS_TOKEN, and on a port of its own
   * (FLOWS_METRICS_PORT, on HOST) to anyone who reaches it; neither set, nowhere.
   */
  metrics: { token: string | null; port: number | null };
  /** OpenTelemetry traces are exported (an OTLP endpoint is set, and neither the SDK nor its trace exporter is off). */
  tracing: boolean;
  /** Lines of agent output a run's trace keeps per attempt (FLOWS_TRACE_MAX_LINES); the rest are dropped, and the trace says so. */
  traceMaxLines: number;
  /**
   * Seconds during which a webhook body of a format that signs no delivery id (all but Standard Webhooks and Slack),
   * received again under a new id, counts as a replay and starts nothing (FLOWS_WEBHOOK_REPLAY_WINDOW_SECONDS); 0: never.
   */
  webhookReplayWindowSeconds: number;
  /**
   * Browser origins, besides BASE_URL's, whose pages may call /mcp (FLOWS_MCP_ALLOWED_ORIGINS); a request
   * from any other Origin is refused, against DNS rebinding.
   */
  mcpAllowedOrigins: string[];
  /** Per model, what its tokens cost: the cost of runs whose agent reports none (FLOWS_MODEL_PRICES). */
  modelPrices: ModelPrices;
  /** Every tenant's monthly budget for its agents' cost unless it sets its own (FLOWS_TENANT_MONTHLY_BUDGET_USD); null: none. */
  tenantMonthlyBudgetUsd: number | null;
}

export interface DockerHost {
  /** `unix:///var/run/docker.sock` or `tcp://host:2375`. */
  host: string;
  /** Patterns of the images tenants may name (`*` stands for anything). */
  images: string[];
}

export interface LocalAgent {
  command: string;
  timeoutSeconds: number;
  /** `bubblewrap` (the default): the agent sees its workspace and the system only. `off`: unsafe for webhook jobs. */
  sandbox?: 'bubblewrap' | 'off';
  /**
   * Where the sandboxed agent may connect, through its egress proxy: `public` (the default: the public
   * internet), `allowlist` (the domains of `allow` only) or `none`. Never this machine or its networks.
   */
  network?: NetworkMode;
  /** The domains of `allowlist` (FLOWS_LOCAL_AGENT_ALLOW). */
  allow?: string[];
  /** The unprivileged host user that runs the sandbox when the server runs as root (FLOWS_LOCAL_AGENT_UID). */
  uid?: number;
  /** Per run (FLOWS_LOCAL_AGENT_PIDS, …_MEMORY_MB, …_CPU_SECONDS, …_WORKSPACE_MB, …_TMP_MB, …_OUTPUT_MB). */
  limits?: ResourceLimits;
  /** Host paths the sandboxed agent also sees, at the same place (FLOWS_LOCAL_AGENT_BIND). */
  binds?: SandboxBind[];
  /** Names of the server's environment variables passed on to the agent (FLOWS_LOCAL_AGENT_ENV). */
  env?: string[];
  /** Where each agent kind's CLI is, when not on PATH by its usual name (FLOWS_AGENT_BIN_CLAUDE_CODE, …_CODEX, …). */
  agentBins?: Partial<Record<StreamKind, string>>;
  /** Where agents' state is kept between the runs of a session (FLOWS_AGENT_STATE_DIR). */
  stateDir?: string;
}

export interface SandboxBind {
  path: string;
  writable: boolean;
  /** Where the sandbox sees it; at `path` itself when not given. */
  at?: string;
}

/** Where agents' sessions are kept by default: beside the embedded database. */
export const DEFAULT_AGENT_STATE_DIR = path.resolve(projectRoot, 'data', 'agent-state');

export const DEFAULT_LOCAL_AGENT_TIMEOUT_SECONDS = 1800;

export class ConfigError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`${variable}: ${message}`);
  }
}

/**
 * A day: a captured body resent under a new id is refused for that long after its first recording, while a
 * sender that repeats a byte-identical body on purpose loses the repeats of one day at most.
 */
export const DEFAULT_WEBHOOK_REPLAY_WINDOW_SECONDS = 86_400;

/** API requests per minute allowed per credential and per client address, unless configured. */
export const DEFAULT_API_RATE_LIMITS = { api: 600, apiAddress: 1200 };

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** FLOWS_AGENT_BIN_<KIND> (`claude-code`: FLOWS_AGENT_BIN_CLAUDE_CODE): an absolute path. */
function agentBins(env: NodeJS.ProcessEnv): Partial<Record<StreamKind, string>> {
  const bins: Partial<Record<StreamKind, string>> = {};
  for (const kind of STREAM_KINDS) {
    const variable = agentBinVariable(kind);
    const value = env[variable]?.trim();
    if (!value) continue;
    if (!value.startsWith('/')) throw new ConfigError(variable, `"${value}" is not an absolute path`);
    bins[kind] = value;
  }
  return bins;
}

/** An amount of US dollars above 0, or null when unset. */
function dollarsOf(env: NodeJS.ProcessEnv, variable: string): number | null {
  const raw = env[variable]?.trim();
  if (!raw) return null;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || value > 1_000_000) throw new ConfigError(variable, `"${raw}" is not an amount of US dollars above 0 (at most 1000000)`);
  return value;
}

/** FLOWS_MODEL_PRICES: the JSON table itself, or the path of a file holding it. */
function modelPrices(env: NodeJS.ProcessEnv): ModelPrices {
  const raw = env.FLOWS_MODEL_PRICES?.trim();
  if (!raw) return {};
  let value: unknown;
  try {
    value = JSON.parse(raw.startsWith('{') ? raw : readFileSync(path.resolve(raw), 'utf8'));
  } catch (err) {
    throw new ConfigError('FLOWS_MODEL_PRICES', `is neither a JSON price table nor a readable file holding one (${(err as Error).message})`);
  }
  const problem = pricesProblem(value);
  if (problem) throw new ConfigError('FLOWS_MODEL_PRICES', problem);
  return value as ModelPrices;
}

const list = (raw: string | undefined) => (raw ?? '').split(',').map((item) => item.trim()).filter(Boolean);

/** FLOWS_DOCKER_HOST (or Docker's own DOCKER_HOST) turns `docker` targets on; they need an image allowlist. */
function dockerHost(env: NodeJS.ProcessEnv): DockerHost | null {
  const host = env.FLOWS_DOCKER_HOST?.trim() || env.DOCKER_HOST?.trim();
  if (!host) return null;
  const variable = env.FLOWS_DOCKER_HOST?.trim() ? 'FLOWS_DOCKER_HOST' : 'DOCKER_HOST';
  if (!/^(unix:\/\/\/.+|tcp:\/\/[^/]+:\d+\/?)$/.test(host)) throw new ConfigError(variable, 'must be unix:///path/to/docker.sock or tcp://host:port');
  const images = list(env.FLOWS_DOCKER_IMAGES);
  if (images.length === 0) throw new ConfigError('FLOWS_DOCKER_IMAGES', 'list the images docker targets may use (comma-separated, * for anything), e.g. ghcr.io/acme/*');
  return { host, images };
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!values.includes(raw as T)) throw new ConfigError(name, `must be one of ${values.join(', ')}`);
  return raw as T;
}

/** `~/.claude:ro,/srv/cache:rw`: absolute (or `~`-relative, or relative to the working directory), read-only unless `:rw`. */
function sandboxBinds(env: NodeJS.ProcessEnv): SandboxBind[] {
  return list(env.FLOWS_LOCAL_AGENT_BIND).map((item) => {
    const [, raw, mode] = /^(.*?)(?::(ro|rw))?$/.exec(item)!;
    const home = env.HOME ?? '/';
    const resolved = path.resolve(raw === '~' || raw.startsWith('~/') ? path.join(home, raw.slice(1)) : raw);
    if (!existsSync(resolved)) throw new ConfigError('FLOWS_LOCAL_AGENT_BIND', `${resolved} does not exist`);
    return { path: resolved, writable: mode === 'rw' };
  });
}

/** FLOWS_LOCAL_AGENT_NETWORK and its allowlist; `on`, the name of `public` in earlier releases, is still taken. */
function localNetwork(env: NodeJS.ProcessEnv): { network: NetworkMode; allow: string[] } {
  const mode = oneOf(env, 'FLOWS_LOCAL_AGENT_NETWORK', ['public', 'allowlist', 'none', 'on'] as const, 'public');
  const allow = list(env.FLOWS_LOCAL_AGENT_ALLOW).map((domain) => domain.toLowerCase());
  for (const domain of allow) {
    const problem = domainProblem(domain);
    if (problem) throw new ConfigError('FLOWS_LOCAL_AGENT_ALLOW', problem);
  }
  if (mode === 'allowlist' && allow.length === 0) throw new ConfigError('FLOWS_LOCAL_AGENT_ALLOW', 'lists the domains the agent may reach with FLOWS_LOCAL_AGENT_NETWORK=allowlist (comma-separated; *.example.com for the names under it)');
  if (mode !== 'allowlist' && allow.length > 0) throw new ConfigError('FLOWS_LOCAL_AGENT_ALLOW', 'applies only with FLOWS_LOCAL_AGENT_NETWORK=allowlist');
  return { network: mode === 'on' ? 'public' : mode, allow };
}

function localLimits(env: NodeJS.ProcessEnv): ResourceLimits {
  const limit = (name: string, fallback: number, min: number, max: number) => integer(env, `FLOWS_LOCAL_AGENT_${name}`, fallback, min, max);
  return {
    pids: limit('PIDS', DEFAULT_LIMITS.pids, 16, 1_000_000),
    memoryMb: limit('MEMORY_MB', DEFAULT_LIMITS.memoryMb, 64, 1_048_576),
    cpuSeconds: limit('CPU_SECONDS', DEFAULT_LIMITS.cpuSeconds, 1, 7 * 24 * 3600 * 64),
    workspaceMb: limit('WORKSPACE_MB', DEFAULT_LIMITS.workspaceMb, 1, 1_048_576),
    tmpMb: limit('TMP_MB', DEFAULT_LIMITS.tmpMb, 1, 1_048_576),
    outputMb: limit('OUTPUT_MB', DEFAULT_LIMITS.outputMb, 1, 10_240),
  };
}

/** Comma-separated http(s) origins (`https://app.example.com`), kept as browsers send them in `Origin`. */
function origins(env: NodeJS.ProcessEnv, name: string): string[] {
  return list(env[name]).map((raw) => {
    let url: URL | null = null;
    try {
      url = new URL(raw);
    } catch {
      // refused below
    }
    if (!url || !['http:', 'https:'].includes(url.protocol) || url.pathname !== '/' || url.search || url.hash || url.username || url.password) {
      throw new ConfigError(name, `"${raw}" is not an http(s) origin (scheme, host and port only, e.g. https://app.example.com)`);
    }
    return url.origin;
  });
}

export function providerOf(url: string): DatabaseProvider | null {
  if (url.startsWith('file:')) return 'sqlite';
  if (/^postgres(ql)?:\/\//.test(url)) return 'postgresql';
  return null;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new ConfigError(name, `must be an integer from ${min} to ${max}, got "${raw}"`);
  return value;
}

function boolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function parseKey(name: string, raw: string): Buffer {
  const key = /^[0-9a-f]{64}$/i.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32) throw new ConfigError(name, 'must be 32 bytes, as 64 hex characters or base64');
  return key;
}

/** The embedded default keeps a generated key beside its database, readable by the service user only. */
function repositoryCache(env: NodeJS.ProcessEnv, dataDir: string): Config['repositoryCache'] {
  const maxMb = integer(env, 'FLOWS_REPOSITORY_CACHE_MB', 2048, 0, 1_048_576);
  if (maxMb === 0) return null;
  return { dir: env.FLOWS_REPOSITORY_CACHE_DIR?.trim() ? path.resolve(env.FLOWS_REPOSITORY_CACHE_DIR.trim()) : path.join(dataDir, 'repository-cache'), maxMb };
}

function embeddedKey(dataDir: string): Buffer {
  const file = path.join(dataDir, 'secret.key');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  }
  chmodSync(file, 0o600);
  return parseKey(file, readFileSync(file, 'utf8').trim());
}

/** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT, unless OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none. */
function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return Boolean(endpoint) && env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== 'true' && env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() !== 'none';
}

/** FLOWS_METRICS_TOKEN (a bearer a scraper sends, 32 characters or more) and FLOWS_METRICS_PORT. */
function metricsSettings(env: NodeJS.ProcessEnv, port: number): Config['metrics'] {
  const token = env.FLOWS_METRICS_TOKEN?.trim() || null;
  if (token !== null && token.length < 32) throw new ConfigError('FLOWS_METRICS_TOKEN', 'must have at least 32 characters (for example: openssl rand -hex 32)');
  const metricsPort = env.FLOWS_METRICS_PORT ? integer(env, 'FLOWS_METRICS_PORT', 0, 1, 65535) : null;
  if (metricsPort !== null && metricsPort === port) throw new ConfigError('FLOWS_METRICS_PORT', 'must differ from PORT (set FLOWS_METRICS_TOKEN to serve /metrics on the main port)');
  return { token, port: metricsPort };
}

/** Settings that may come from a file instead (`NAME_FILE`: a container's secret, never in the environment). */
const FROM_FILES = ['DATABASE_URL', 'FLOWS_SECRET_KEY', 'FLOWS_SECRET_KEY_PREVIOUS', 'FLOWS_METRICS_TOKEN', 'FLOWS_BOOTSTRAP_OWNER_PASSWORD'];

/** `env` with each `NAME_FILE` of FROM_FILES read into `NAME` (its content, trimmed). */
function withFiles(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const read: NodeJS.ProcessEnv = {};
  for (const name of FROM_FILES) {
    const file = env[`${name}_FILE`];
    if (!file) continue;
    if (env[name]) throw new ConfigError(`${name}_FILE`, `is set beside ${name}: set one of them`);
    try {
      read[name] = readFileSync(file, 'utf8').trim();
    } catch (err) {
      throw new ConfigError(`${name}_FILE`, `cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): ${file}`);
    }
  }
  return { ...env, ...read };
}

export function loadConfig(given: NodeJS.ProcessEnv = process.env): Config {
  const env = withFiles(given);
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST || '0.0.0.0';

  let baseUrl: URL;
  try {
    baseUrl = new URL(env.BASE_URL || `http://localhost:${port}`);
  } catch {
    throw new ConfigError('BASE_URL', `must be an absolute http(s) URL, got "${env.BASE_URL}"`);
  }
  if (!['http:', 'https:'].includes(baseUrl.protocol) || baseUrl.pathname !== '/' || baseUrl.search || baseUrl.hash) {
    throw new ConfigError('BASE_URL', `must be an http(s) origin without path, query or fragment, got "${env.BASE_URL}"`);
  }

  const dataDir = path.resolve(projectRoot, 'data');
  const databaseUrl = env.DATABASE_URL || `file:${path.join(dataDir, 'flows.db')}`;
  const databaseProvider = providerOf(databaseUrl);
  if (!databaseProvider) throw new ConfigError('DATABASE_URL', 'must start with file: (SQLite) or postgres:// / postgresql://');

  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);

  let secretKey: Buffer;
  if (env.FLOWS_SECRET_KEY) secretKey = parseKey('FLOWS_SECRET_KEY', env.FLOWS_SECRET_KEY);
  else if (databaseProvider === 'sqlite') secretKey = embeddedKey(path.dirname(databaseUrl.slice('file:'.length)));
  else throw new ConfigError('FLOWS_SECRET_KEY', 'is required with PostgreSQL, so that every instance shares it (32 bytes, hex or base64)');

  const signup = env.FLOWS_SIGNUP || 'closed';
  if (signup !== 'open' && signup !== 'closed') throw new ConfigError('FLOWS_SIGNUP', `must be open or closed, got "${signup}"`);

  const bootstrapEmail = env.FLOWS_BOOTSTRAP_OWNER_EMAIL;
  const bootstrapPassword = env.FLOWS_BOOTSTRAP_OWNER_PASSWORD;
  if (Boolean(bootstrapEmail) !== Boolean(bootstrapPassword)) {
    throw new ConfigError(bootstrapEmail ? 'FLOWS_BOOTSTRAP_OWNER_PASSWORD' : 'FLOWS_BOOTSTRAP_OWNER_EMAIL', 'must be set together with its pair');
  }

  return {
    port,
    host,
    baseUrl,
    databaseUrl,
    databaseProvider,
    logLevel,
    // A person reads a terminal; anything else (a file, a collector) gets JSON.
    logFormat: oneOf(env, 'LOG_FORMAT', ['pretty', 'json'] as const, process.stdout.isTTY ? 'pretty' : 'json'),
    secretKey,
    previousSecretKeys: (env.FLOWS_SECRET_KEY_PREVIOUS ?? '')
      .split(',')
      .map((key) => key.trim())
      .filter(Boolean)
      .map((key) => parseKey('FLOWS_SECRET_KEY_PREVIOUS', key)),
    migrateOnStart: boolean(env, 'FLOWS_MIGRATE_ON_START', true),
    trustProxy: boolean(env, 'TRUST_PROXY', false),
    signupOpen: signup === 'open',
    bootstrapOwner: bootstrapEmail && bootstrapPassword ? { email: bootstrapEmail, password: bootstrapPassword } : null,
    rateLimits: {
      api: integer(env, 'FLOWS_RATE_LIMIT_API', DEFAULT_API_RATE_LIMITS.api, 0, 1_000_000_000),
      apiAddress: integer(env, 'FLOWS_RATE_LIMIT_API_ADDRESS', DEFAULT_API_RATE_LIMITS.apiAddress, 0, 1_000_000_000),
    },
    localAgent: env.FLOWS_LOCAL_AGENT_COMMAND?.trim()
      ? {
          command: env.FLOWS_LOCAL_AGENT_COMMAND,
          timeoutSeconds: integer(env, 'FLOWS_LOCAL_AGENT_TIMEOUT_SECONDS', DEFAULT_LOCAL_AGENT_TIMEOUT_SECONDS, 1, 7 * 24 * 3600),
          sandbox: oneOf(env, 'FLOWS_LOCAL_AGENT_SANDBOX', ['bubblewrap', 'off'] as const, 'bubblewrap'),
          ...localNetwork(env),
          uid: integer(env, 'FLOWS_LOCAL_AGENT_UID', 65534, 1, 4_294_967_294),
          limits: localLimits(env),
          binds: sandboxBinds(env),
          agentBins: agentBins(env),
          stateDir: env.FLOWS_AGENT_STATE_DIR?.trim() ? path.resolve(env.FLOWS_AGENT_STATE_DIR.trim()) : DEFAULT_AGENT_STATE_DIR,
          env: list(env.FLOWS_LOCAL_AGENT_ENV).map((name) => {
            if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new ConfigError('FLOWS_LOCAL_AGENT_ENV', `"${name}" is not a variable name`);
            return name;
          }),
        }
      : null,
    docker: dockerHost(env),
    allowPrivateNetwork: boolean(env, 'FLOWS_ALLOW_PRIVATE_NETWORK', false),
    instanceLapseSeconds: integer(env, 'FLOWS_INSTANCE_LAPSE_SECONDS', 30, 3, 3600),
    traceMaxLines: integer(env, 'FLOWS_TRACE_MAX_LINES', 20_000, 100, 10_000_000),
    webhookReplayWindowSeconds: integer(env, 'FLOWS_WEBHOOK_REPLAY_WINDOW_SECONDS', DEFAULT_WEBHOOK_REPLAY_WINDOW_SECONDS, 0, 365 * 86_400),
    mcpAllowedOrigins: origins(env, 'FLOWS_MCP_ALLOWED_ORIGINS'),
    modelPrices: modelPrices(env),
    tenantMonthlyBudgetUsd: dollarsOf(env, 'FLOWS_TENANT_MONTHLY_BUDGET_USD'),
    metrics: metricsSettings(env, port),
    tracing: tracingWanted(env),
    retention: { days: integer(env, 'FLOWS_RETENTION_DAYS', 30, 0, 36_500), maxRunsPerJob: integer(env, 'FLOWS_RETENTION_MAX_RUNS_PER_JOB', 10_000, 0, 100_000_000) },
    repositoryCache: repositoryCache(env, dataDir),
  };
}
