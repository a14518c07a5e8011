// Browser and real-client tests against a listening server: `npm run test:e2e`, kept out of `npm test`
// because they need Chromium. One file at a time, so that browsers don't compete for the machine.
const base = require('./jest.config');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
  maxWorkers: 1,
  testTimeout: 60000,
};
