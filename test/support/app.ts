// A real app on a real database of its own, for one test file.
import { randomBytes } from 'node:crypto';
import { buildApp, type App, type AppDeps } from '../../src/app';
import { DEFAULT_API_RATE_LIMITS, type Config } from '../../src/config';
import { createSecretBox } from '../../src/lib/secrets';
import { createTestDatabase, provider, type TestDatabase } from './databases';
import { createSecretRecorder } from './secret-scan';

export const BASE_URL = 'http://localhost:3000';

export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    port: 0,
    host: '127.0.0.1',
    baseUrl: new URL(BASE_URL),
    databaseUrl: 'unused',
    databaseProvider: provider,
    logLevel: 'silent',
    logFormat: 'json',
    secretKey: randomBytes(32),
    previousSecretKeys: [],
    migrateOnStart: false,
    trustProxy: false,
    signupOpen: false,
    bootstrapOwner: null,
    rateLimits: DEFAULT_API_RATE_LIMITS,
    localAgent: null,
    docker: null,
    // The fake providers and event receivers listen on loopback; test/api/outbound-urls.test.ts turns this off.
    allowPrivateNetwork: true,
    instanceLapseSeconds: 30,
    retention: { days: 30, maxRunsPerJob: 10_000 },
    // Every test that clones makes its own cache (test/api/repositories.test.ts).
    repositoryCache: null,
    traceMaxLines: 20_000,
    // Many tests resend one body under new delivery ids and count each; test/api/webhook-replays.test.ts turns this on.
    webhookReplayWindowSeconds: 0,
    mcpAllowedOrigins: [],
    modelPrices: {},
    tenantMonthlyBudgetUsd: null,
    // test/api/tracing.test.ts exports to a collector of its own.
    tracing: false,
    metrics: { token: null, port: null },
    ...overrides,
  };
}

export interface TestApp extends App {
  database: TestDatabase;
  config: Config;
  /** Every line the app logged, at level trace. */
  logLines: string[];
  /** Stops the app, then fails when a secret showed in an answer, a log line or a database row (secret-scan.ts). */
  close(): Promise<void>;
  /** A secret the app holds unsealed (a token minted for a run): the scan at close looks for it too. */
  rememberSecret(value: string): void;
}

export type TestDeps = Partial<Pick<AppDeps, 'policies' | 'now' | 'vmhostTiming' | 'localEgress' | 'reportEditEveryMs'>>;

/**
 * Another instance of `app` on the same database (with its own clock, configuration changes and VM-host
 * timing if given), its answers and log lines scanned for secrets when it closes.
 */
export async function startOtherInstance(app: TestApp, { now, config = {}, vmhostTiming }: Pick<TestDeps, 'now' | 'vmhostTiming'> & { config?: Partial<Config> } = {}) {
  const recorder = createSecretRecorder();
  const built = await buildApp({ config: { ...app.config, ...config }, db: app.database.db, logger: recorder.logger, now, vmhostTiming });
  return {
    ...built,
    app: recorder.record(built.app) as typeof built.app,
    async close() {
      await built.queue.stop();
      await built.runner.shutdown();
      await built.changes?.close();
      await recorder.scan(app.database.db, createSecretBox(app.config.secretKey, app.config.previousSecretKeys));
    },
  };
}

export async function startTestApp(overrides: Partial<Config> = {}, { policies, now, vmhostTiming, localEgress, reportEditEveryMs }: TestDeps = {}): Promise<TestApp> {
  const database = await createTestDatabase();
  const config = testConfig({ databaseUrl: database.url, ...overrides });
  const recorder = createSecretRecorder();
  const built = await buildApp({ config, db: database.db, logger: recorder.logger, policies, now, vmhostTiming, localEgress, reportEditEveryMs });
  return {
    ...built,
    app: recorder.record(built.app) as typeof built.app,
    database,
    config,
    logLines: recorder.logLines,
    rememberSecret: recorder.remember,
    async close() {
      try {
        await built.queue.stop();
        await built.runner.shutdown();
        await built.changes?.close();
        await recorder.scan(database.db, createSecretBox(config.secretKey, config.previousSecretKeys));
      } finally {
        await database.drop();
      }
    },
  };
}
