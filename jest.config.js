/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['<rootDir>/test/{unit,api,db,contract}/**/*.test.ts'],
  transform: { '^.+\\.(t|j)sx?$': ['@swc/jest', {}] },
  // ESM-only packages become CommonJS for Jest (Node itself requires them as they are); OpenTelemetry's
  // exporter loads http with import(), which Jest's VM cannot run without --experimental-vm-modules.
  transformIgnorePatterns: ['/node_modules/(?!(@opentelemetry/otlp-exporter-base|oidc-provider|openid-client|oauth4webapi|jose|@apidevtools/json-schema-ref-parser|@octokit|universal-github-app-jwt|universal-user-agent|toad-cache|json-with-bigint|before-after-hook|fast-content-type-parse|content-type)/)'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 30000,
  // Exit once the run is over. Node 20 can spin at 100 % CPU in its exit cleanup (uv_run in
  // Environment::CleanupHandles) after tests that fetched from a server process they then killed with -9;
  // process.exit skips that cleanup.
  forceExit: true,
};
