// A real app on a real database of its own, for one test file.
import { randomBytes } from 'node:crypto';
import { buildApp, type App, type AppDeps } from '../../src/app';
import { DEFAULT_API_RATE_LIMITS, type Config } from '../../src/config';
import { createLogger } from '../../src/lib/logger';
import { createTestDatabase, provider, type TestDatabase } from './databases';

export const BASE_URL = 'http://localhost:3000';

export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    port: 0,
    host: '127.0.0.1',
    baseUrl: new URL(BASE_URL),
    databaseUrl: 'unused',
    databaseProvider: provider,
    logLevel: 'silent',
    secretKey: randomBytes(32),
    previousSecretKeys: [],
    migrateOnStart: false,
    trustProxy: false,
    signupOpen: false,
    bootstrapOwner: null,
    rateLimits: DEFAULT_API_RATE_LIMITS,
    localAgent: null,
    ...overrides,
  };
}

export interface TestApp extends App {
  database: TestDatabase;
  config: Config;
  close(): Promise<void>;
}

export type TestDeps = Partial<Pick<AppDeps, 'policies' | 'logger' | 'now' | 'vmhostTiming'>>;

export async function startTestApp(overrides: Partial<Config> = {}, { policies, logger = createLogger('silent'), now, vmhostTiming }: TestDeps = {}): Promise<TestApp> {
  const database = await createTestDatabase();
  const config = testConfig({ databaseUrl: database.url, ...overrides });
  const built = await buildApp({ config, db: database.db, logger, policies, now, vmhostTiming });
  return {
    ...built,
    database,
    config,
    async close() {
      await built.runner.shutdown();
      await database.drop();
    },
  };
}
