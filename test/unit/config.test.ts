import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError, DEFAULT_AGENT_STATE_DIR, loadConfig } from '../../src/config';
import { DEFAULT_LIMITS } from '../../src/lib/resource-limits';

const KEY = 'a'.repeat(64);
const dir = mkdtempSync(path.join(tmpdir(), 'flows-config-'));
const sqlite = { DATABASE_URL: `file:${path.join(dir, 'flows.db')}` };

describe('loadConfig', () => {
  it('defaults to port 3000, the embedded database and a generated key kept with mode 0600', () => {
    const config = loadConfig({ ...sqlite });
    expect(config.port).toBe(3000);
    expect(config.baseUrl.href).toBe('http://localhost:3000/');
    expect(config.databaseProvider).toBe('sqlite');
    expect(config.secretKey).toHaveLength(32);
    expect(statSync(path.join(dir, 'secret.key')).mode & 0o777).toBe(0o600);
    // The same key on the next start.
    expect(loadConfig({ ...sqlite }).secretKey.equals(config.secretKey)).toBe(true);
  });

  it('derives BASE_URL from PORT and reads PostgreSQL URLs', () => {
    const config = loadConfig({ PORT: '8080', DATABASE_URL: 'postgresql://u@db/flows', FLOWS_SECRET_KEY: KEY });
    expect(config.baseUrl.origin).toBe('http://localhost:8080');
    expect(config.databaseProvider).toBe('postgresql');
  });

  it('keeps sign-up closed unless FLOWS_SIGNUP=open, and reads the bootstrap owner as a pair', () => {
    expect(loadConfig({ ...sqlite })).toMatchObject({ signupOpen: false, bootstrapOwner: null });
    const config = loadConfig({ ...sqlite, FLOWS_SIGNUP: 'open', FLOWS_BOOTSTRAP_OWNER_EMAIL: 'a@example.test', FLOWS_BOOTSTRAP_OWNER_PASSWORD: 'long enough password' });
    expect(config).toMatchObject({ signupOpen: true, bootstrapOwner: { email: 'a@example.test', password: 'long enough password' } });
  });

  it('reads a secret setting from the file its _FILE names (a container secret), never from both', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'flows-config-files-'));
    writeFileSync(path.join(dir, 'key'), `${'ab'.repeat(32)}\n`);
    writeFileSync(path.join(dir, 'url'), 'postgresql://flows:p%40ss@db:5432/flows\n');
    const config = loadConfig({ FLOWS_SECRET_KEY_FILE: path.join(dir, 'key'), DATABASE_URL_FILE: path.join(dir, 'url') });
    expect(config.secretKey).toEqual(Buffer.from('ab'.repeat(32), 'hex'));
    expect(config.databaseUrl).toBe('postgresql://flows:p%40ss@db:5432/flows');
    expect(() => loadConfig({ ...sqlite, FLOWS_SECRET_KEY: 'cd'.repeat(32), FLOWS_SECRET_KEY_FILE: path.join(dir, 'key') })).toThrow(/^FLOWS_SECRET_KEY_FILE: is set beside FLOWS_SECRET_KEY/);
    expect(() => loadConfig({ ...sqlite, FLOWS_METRICS_TOKEN_FILE: path.join(dir, 'missing') })).toThrow(/^FLOWS_METRICS_TOKEN_FILE: cannot be read \(ENOENT\)/);
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves metrics nowhere unless a token or a port of their own is set', () => {
    expect(loadConfig(sqlite).metrics).toEqual({ token: null, port: null });
    expect(loadConfig({ ...sqlite, FLOWS_METRICS_TOKEN: 't'.repeat(32), FLOWS_METRICS_PORT: '9464' }).metrics).toEqual({ token: 't'.repeat(32), port: 9464 });
  });

  it('exports traces only where an OTLP endpoint is set, and not when OpenTelemetry is told to be off', () => {
    expect(loadConfig(sqlite).tracing).toBe(false);
    expect(loadConfig({ ...sqlite, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing).toBe(true);
    expect(loadConfig({ ...sqlite, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }).tracing).toBe(true);
    expect(loadConfig({ ...sqlite, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).tracing).toBe(false);
    expect(loadConfig({ ...sqlite, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }).tracing).toBe(false);
  });

  it('reads the API rate limits per minute, 0 turning one off', () => {
    expect(loadConfig({ ...sqlite }).rateLimits).toEqual({ api: 600, apiAddress: 1200 });
    expect(loadConfig({ ...sqlite, FLOWS_RATE_LIMIT_API: '5000', FLOWS_RATE_LIMIT_API_ADDRESS: '0' }).rateLimits).toEqual({ api: 5000, apiAddress: 0 });
  });

  it('reads the webhook replay window in seconds, a day unless set, 0 turning it off', () => {
    expect(loadConfig({ ...sqlite }).webhookReplayWindowSeconds).toBe(86_400);
    expect(loadConfig({ ...sqlite, FLOWS_WEBHOOK_REPLAY_WINDOW_SECONDS: '0' }).webhookReplayWindowSeconds).toBe(0);
    expect(() => loadConfig({ ...sqlite, FLOWS_WEBHOOK_REPLAY_WINDOW_SECONDS: '-1' })).toThrow(/FLOWS_WEBHOOK_REPLAY_WINDOW_SECONDS/);
  });

  it('reads the extra origins allowed to call /mcp, as browsers send them', () => {
    expect(loadConfig({ ...sqlite }).mcpAllowedOrigins).toEqual([]);
    expect(loadConfig({ ...sqlite, FLOWS_MCP_ALLOWED_ORIGINS: 'https://Console.Example.com/, http://localhost:6274' }).mcpAllowedOrigins).toEqual(['https://console.example.com', 'http://localhost:6274']);
  });

  it('refuses private network addresses for outbound calls unless FLOWS_ALLOW_PRIVATE_NETWORK is true', () => {
    expect(loadConfig({ ...sqlite }).allowPrivateNetwork).toBe(false);
    expect(loadConfig({ ...sqlite, FLOWS_ALLOW_PRIVATE_NETWORK: 'true' }).allowPrivateNetwork).toBe(true);
  });

  it('sandboxes the local agent unless told not to, and reads its binds and variables', () => {
    writeFileSync(path.join(dir, 'bound.txt'), '');
    expect(loadConfig({ ...sqlite, FLOWS_LOCAL_AGENT_COMMAND: 'agent' }).localAgent).toEqual({
      command: 'agent', timeoutSeconds: 1800, sandbox: 'bubblewrap', network: 'public', allow: [], uid: 65534, limits: DEFAULT_LIMITS, binds: [], env: [], agentBins: {}, stateDir: DEFAULT_AGENT_STATE_DIR,
    });
    // Each agent kind's CLI where the operator put it.
    expect(loadConfig({ ...sqlite, FLOWS_LOCAL_AGENT_COMMAND: 'agent', FLOWS_AGENT_BIN_CLAUDE_CODE: '/opt/claude/claude', FLOWS_AGENT_BIN_CODEX: ' /opt/codex ' }).localAgent?.agentBins).toEqual({
      'claude-code': '/opt/claude/claude', codex: '/opt/codex',
    });
    expect(loadConfig({ ...sqlite, FLOWS_LOCAL_AGENT_COMMAND: 'agent', FLOWS_AGENT_STATE_DIR: '/var/lib/flows/agents' }).localAgent?.stateDir).toBe('/var/lib/flows/agents');
    // Prices inline, or in a file.
    const prices = { 'gpt-5.5': { input: 1.25, output: 10 } };
    expect(loadConfig({ ...sqlite, FLOWS_MODEL_PRICES: JSON.stringify(prices) }).modelPrices).toEqual(prices);
    writeFileSync(path.join(dir, 'prices.json'), JSON.stringify(prices));
    expect(loadConfig({ ...sqlite, FLOWS_MODEL_PRICES: path.join(dir, 'prices.json') }).modelPrices).toEqual(prices);
    expect(loadConfig(sqlite).modelPrices).toEqual({});
    expect(loadConfig({ ...sqlite, FLOWS_TENANT_MONTHLY_BUDGET_USD: '250.5' }).tenantMonthlyBudgetUsd).toBe(250.5);
    expect(loadConfig(sqlite).tenantMonthlyBudgetUsd).toBeNull();
    // `on`, the earlier name of `public`, is still taken; an allowlist names domains.
    expect(loadConfig({ ...sqlite, FLOWS_LOCAL_AGENT_COMMAND: 'agent', FLOWS_LOCAL_AGENT_NETWORK: 'on' }).localAgent?.network).toBe('public');
    expect(loadConfig({ ...sqlite, FLOWS_LOCAL_AGENT_COMMAND: 'agent', FLOWS_LOCAL_AGENT_NETWORK: 'allowlist', FLOWS_LOCAL_AGENT_ALLOW: 'api.anthropic.com, *.npmjs.org' }).localAgent).toMatchObject({
      network: 'allowlist', allow: ['api.anthropic.com', '*.npmjs.org'],
    });
    expect(loadConfig({ ...sqlite, FLOWS_LOCAL_AGENT_COMMAND: 'agent', FLOWS_LOCAL_AGENT_PIDS: '64', FLOWS_LOCAL_AGENT_WORKSPACE_MB: '100' }).localAgent?.limits).toEqual({ ...DEFAULT_LIMITS, pids: 64, workspaceMb: 100 });
    const config = loadConfig({
      ...sqlite, HOME: dir, FLOWS_LOCAL_AGENT_COMMAND: 'agent', FLOWS_LOCAL_AGENT_SANDBOX: 'off', FLOWS_LOCAL_AGENT_NETWORK: 'none',
      FLOWS_LOCAL_AGENT_BIND: `~:ro, ${dir}:rw,~/bound.txt`, FLOWS_LOCAL_AGENT_ENV: 'ANTHROPIC_API_KEY, GH_TOKEN',
    });
    expect(config.localAgent).toMatchObject({
      sandbox: 'off', network: 'none', env: ['ANTHROPIC_API_KEY', 'GH_TOKEN'],
      binds: [{ path: dir, writable: false }, { path: dir, writable: true }, { path: path.join(dir, 'bound.txt'), writable: false }],
    });
  });

  it.each([
    ['FLOWS_LOCAL_AGENT_SANDBOX', { FLOWS_LOCAL_AGENT_COMMAND: 'agent', FLOWS_LOCAL_AGENT_SANDBOX: 'maybe' }],
    ['FLOWS_LOCAL_AGENT_NETWORK', { FLOWS_LOCAL_AGENT_COMMAND: 'agent', FLOWS_LOCAL_AGENT_NETWORK: 'some' }],
    ['FLOWS_LOCAL_AGENT_ALLOW', { FLOWS_LOCAL_AGENT_COMMAND: 'agent', FLOWS_LOCAL_AGENT_NETWORK: 'allowlist' }],
    ['FLOWS_LOCAL_AGENT_ALLOW', { FLOWS_LOCAL_AGENT_COMMAND: 'agent', FLOWS_LOCAL_AGENT_NETWORK: 'allowlist', FLOWS_LOCAL_AGENT_ALLOW: '10.0.0.1' }],
    ['FLOWS_LOCAL_AGENT_ALLOW', { FLOWS_LOCAL_AGENT_COMMAND: 'agent', FLOWS_LOCAL_AGENT_ALLOW: 'example.com' }],
    ['FLOWS_LOCAL_AGENT_PIDS', { FLOWS_LOCAL_AGENT_COMMAND: 'agent', FLOWS_LOCAL_AGENT_PIDS: '2' }],
    ['FLOWS_LOCAL_AGENT_BIND', { FLOWS_LOCAL_AGENT_COMMAND: 'agent', FLOWS_LOCAL_AGENT_BIND: '/no/such/path' }],
    ['FLOWS_LOCAL_AGENT_ENV', { FLOWS_LOCAL_AGENT_COMMAND: 'agent', FLOWS_LOCAL_AGENT_ENV: 'NOT-A-NAME' }],
    ['FLOWS_AGENT_BIN_GEMINI', { FLOWS_LOCAL_AGENT_COMMAND: 'agent', FLOWS_AGENT_BIN_GEMINI: 'gemini' }],
    ['FLOWS_MODEL_PRICES', { FLOWS_MODEL_PRICES: '{"m": {"input": "cheap"}}' }],
    ['FLOWS_MODEL_PRICES', { FLOWS_MODEL_PRICES: '/no/such/prices.json' }],
    ['FLOWS_TENANT_MONTHLY_BUDGET_USD', { FLOWS_TENANT_MONTHLY_BUDGET_USD: '0' }],
    ['FLOWS_TENANT_MONTHLY_BUDGET_USD', { FLOWS_TENANT_MONTHLY_BUDGET_USD: 'lots' }],
    ['FLOWS_RATE_LIMIT_API', { FLOWS_RATE_LIMIT_API: '-1' }],
    ['FLOWS_RATE_LIMIT_API', { FLOWS_RATE_LIMIT_API: 'lots' }],
    ['FLOWS_RATE_LIMIT_API_ADDRESS', { FLOWS_RATE_LIMIT_API_ADDRESS: '1.5' }],
    ['PORT', { PORT: 'eighty' }],
    ['PORT', { PORT: '70000' }],
    ['BASE_URL', { BASE_URL: 'not a url' }],
    ['BASE_URL', { BASE_URL: 'ftp://flows.example' }],
    ['BASE_URL', { BASE_URL: 'https://flows.example/api' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://db/flows' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['LOG_FORMAT', { LOG_FORMAT: 'xml' }],
    ['FLOWS_METRICS_TOKEN', { FLOWS_METRICS_TOKEN: 'too-short' }],
    ['FLOWS_METRICS_PORT', { FLOWS_METRICS_PORT: '0' }],
    ['FLOWS_METRICS_PORT', { FLOWS_METRICS_PORT: '3000' }],
    ['FLOWS_SECRET_KEY', { FLOWS_SECRET_KEY: 'short' }],
    ['FLOWS_SECRET_KEY', { DATABASE_URL: 'postgres://db/flows' }],
    ['FLOWS_MIGRATE_ON_START', { FLOWS_MIGRATE_ON_START: 'maybe' }],
    ['FLOWS_SIGNUP', { FLOWS_SIGNUP: 'yes' }],
    ['FLOWS_ALLOW_PRIVATE_NETWORK', { FLOWS_ALLOW_PRIVATE_NETWORK: 'yes' }],
    ['FLOWS_MCP_ALLOWED_ORIGINS', { FLOWS_MCP_ALLOWED_ORIGINS: 'console.example.com' }],
    ['FLOWS_MCP_ALLOWED_ORIGINS', { FLOWS_MCP_ALLOWED_ORIGINS: 'https://console.example.com/app' }],
    ['FLOWS_MCP_ALLOWED_ORIGINS', { FLOWS_MCP_ALLOWED_ORIGINS: '*' }],
    ['FLOWS_BOOTSTRAP_OWNER_PASSWORD', { FLOWS_BOOTSTRAP_OWNER_EMAIL: 'a@example.test' }],
    ['FLOWS_BOOTSTRAP_OWNER_EMAIL', { FLOWS_BOOTSTRAP_OWNER_PASSWORD: 'long enough password' }],
  ])('names %s when it is wrong', (variable, env) => {
    expect(() => loadConfig({ ...sqlite, ...env })).toThrow(ConfigError);
    expect(() => loadConfig({ ...sqlite, ...env })).toThrow(new RegExp(`^${variable}: `));
  });
});
