// Sign-in throttling over real HTTP, on the real store (memory on SQLite, the RateLimit table on PostgreSQL):
// failures slow down the account and address that fail, never the owner signing in from elsewhere. The
// client address comes from X-Forwarded-For, as behind one trusted proxy (TRUST_PROXY=true).
import request from 'supertest';
import { buildApp } from '../../src/app';
import { createLogger } from '../../src/lib/logger';
import { startTestApp, BASE_URL, type TestApp } from '../support/app';
import { provider } from '../support/databases';

const POLICIES = {
  signInPair: { points: 3, durationSeconds: 3600 },
  signInIp: { points: 8, durationSeconds: 3600 },
  signInAccount: { points: 10, durationSeconds: 3600 },
};
const PASSWORD = 'correct horse battery';
const WRONG = 'not the password';
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ trustProxy: true }, { policies: POLICIES });
});
afterAll(() => app.close());

let counter = 0;
async function owner() {
  const email = `throttled${++counter}@example.test`;
  await app.owners.createOwner({ email, password: PASSWORD, tenantName: 'Acme' });
  return email;
}
/** An address of the documentation ranges no other test uses. */
const address = () => `198.51.100.${++counter}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const signIn = (email: string, password: string, from: string, on: { app: TestApp['app'] } = app) =>
  request(on.app).post('/login').set('origin', BASE_URL).set('x-forwarded-for', from).type('form').send({ email, password });

async function fail(email: string, from: string, times: number) {
  for (let i = 0; i < times; i++) expect((await signIn(email, WRONG, from)).status).toBe(401);
}

it('signs the owner in at once from another address while one address keeps failing', async () => {
  const email = await owner();
  const attacker = address();
  await fail(email, attacker, 3);
  expect((await signIn(email, WRONG, attacker)).status).toBe(429);
  await sleep(1100);
  await fail(email, attacker, 1); // the next one waits 2 s
  expect((await signIn(email, WRONG, attacker)).status).toBe(429);
  const owners = await signIn(email, PASSWORD, address());
  expect(owners.status).toBe(303);
  expect(owners.headers['set-cookie']).toBeDefined();
  // The owner's success leaves the attacker's count as it was.
  expect((await signIn(email, WRONG, attacker)).status).toBe(429);
});

it('makes the failing address wait 1 s, 2 s, 4 s…: 429 with a growing Retry-After, the wait on the page', async () => {
  const email = await owner();
  const attacker = address();
  await fail(email, attacker, 3);
  const waits: number[] = [];
  for (const expected of [1, 2, 4]) {
    const refused = await signIn(email, WRONG, attacker);
    expect(refused.status).toBe(429);
    const seconds = Number(refused.headers['retry-after']);
    expect(seconds).toBeLessThanOrEqual(expected);
    expect(refused.text).toContain(`Try again in ${seconds} second`);
    waits.push(seconds);
    // Even the right password waits: the pair is refused before any password is checked.
    expect((await signIn(email, PASSWORD, attacker)).status).toBe(429);
    await sleep(expected * 1000 + 100);
    expect((await signIn(email, WRONG, attacker)).status).toBe(401);
  }
  expect(waits).toEqual([1, 2, 4]);
  const last = await signIn(email, WRONG, attacker);
  expect(last.status).toBe(429);
  expect(Number(last.headers['retry-after'])).toBeGreaterThan(4);
  expect(Number(last.headers['retry-after'])).toBeLessThanOrEqual(8);
}, 20_000);

it('forgets the failures of the pair at a success', async () => {
  const email = await owner();
  const from = address();
  await fail(email, from, 3);
  await sleep(1100);
  expect((await signIn(email, PASSWORD, from)).status).toBe(303);
  await fail(email, from, 3); // free again
  expect((await signIn(email, WRONG, from)).status).toBe(429);
});

it('refuses an address that fails across many accounts, and only that address', async () => {
  const guesser = address();
  const emails = [await owner(), await owner(), await owner(), await owner()];
  for (const email of emails) await fail(email, guesser, 2); // 8: the address's limit
  const refused = await signIn(emails[0], PASSWORD, guesser);
  expect(refused.status).toBe(429);
  expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3000);
  expect((await signIn(await owner(), PASSWORD, guesser)).status).toBe(429);
  expect((await signIn(emails[0], PASSWORD, address())).status).toBe(303);
});

it('brakes an account failing from many addresses: each address waits from its first failure, a new one signs in', async () => {
  const email = await owner();
  for (let i = 0; i < 11; i++) await fail(email, address(), 1); // past the account's 10
  const failedOnce = address();
  await fail(email, failedOnce, 1);
  const refused = await signIn(email, PASSWORD, failedOnce);
  expect(refused.status).toBe(429);
  expect(refused.headers['retry-after']).toBe('1');
  expect((await signIn(email, PASSWORD, address())).status).toBe(303);
});

it('lets one of a burst of attempts through past the free ones, counting them before any password is checked', async () => {
  const email = await owner();
  const from = address();
  const statuses = await Promise.all(Array.from({ length: 8 }, () => signIn(email, WRONG, from).then((res) => res.status)));
  expect(statuses.filter((s) => s === 401)).toHaveLength(3);
  expect(statuses.filter((s) => s === 429)).toHaveLength(5);
});

(provider === 'postgresql' ? it : it.skip)('shares the counts between instances on PostgreSQL', async () => {
  const other = await buildApp({ config: app.config, db: app.database.db, logger: createLogger('silent'), policies: POLICIES });
  try {
    const email = await owner();
    const attacker = address();
    await fail(email, attacker, 2);
    expect((await signIn(email, WRONG, attacker, other)).status).toBe(401);
    expect((await signIn(email, WRONG, attacker, other)).status).toBe(429);
    expect((await signIn(email, WRONG, attacker)).status).toBe(429);
    expect((await signIn(email, PASSWORD, address(), other)).status).toBe(303);
  } finally {
    await other.queue.stop();
    await other.runner.shutdown();
    await other.changes?.close();
  }
});
