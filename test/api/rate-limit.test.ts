// Rate limits through a real store: memory on SQLite, the RateLimit table on PostgreSQL (TEST_DATABASE_URL),
// so the same tests cover both. Windows of one second keep the waits short.
import { randomUUID } from 'node:crypto';
import express from 'express';
import pino from 'pino';
import request from 'supertest';
import { createDb } from '../../src/db/client';
import { errorHandler } from '../../src/http/error-handler';
import { createRateLimits, rateLimit, type PolicyName, type RateLimits } from '../../src/http/rate-limit';
import { requestContext } from '../../src/http/request-context';
import { createLogger } from '../../src/lib/logger';
import { startTestApp } from '../support/app';
import { createTestDatabase, provider, type TestDatabase } from '../support/databases';
import { accessToken, createOwner } from '../support/identity';

const POLICIES = {
  api: { points: 3, durationSeconds: 60 },
  apiIp: { points: 3, durationSeconds: 60 },
  signInAccount: { points: 2, durationSeconds: 60 },
  signInIp: { points: 1, durationSeconds: 1 },
};

let database: TestDatabase;
let limits: RateLimits;

beforeAll(async () => {
  database = await createTestDatabase();
  limits = createRateLimits({ db: database.db, provider, policies: POLICIES });
});
afterAll(() => database.drop());

const onPostgres = provider === 'postgresql' ? it : it.skip;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A key no other test uses. */
const fresh = (label: string) => `${label}-${randomUUID()}@example.com`;

/** `/api` and `/anonymous` count the X-Caller header under their own policy; without it nothing is counted. */
function appWith(rateLimits: RateLimits) {
  const app = express();
  app.use(requestContext(createLogger('silent')));
  const limited = (policy: PolicyName) => rateLimit(rateLimits, policy, (req) => req.get('x-caller') ?? null);
  app.get('/api', limited('api'), (_req, res) => void res.json({ ok: true }));
  app.get('/anonymous', limited('apiIp'), (_req, res) => void res.json({ ok: true }));
  app.use(errorHandler);
  return app;
}

const call = (path: string, caller?: string) => {
  const req = request(appWith(limits)).get(path);
  return caller ? req.set('x-caller', caller) : req;
};

describe('rateLimit middleware', () => {
  it('allows exactly `points` requests, counting down RateLimit-Remaining, then answers 429 rate_limited', async () => {
    const caller = fresh('boundary');
    for (const remaining of ['2', '1', '0']) {
      const res = await call('/api', caller);
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('3');
      expect(res.headers['ratelimit-remaining']).toBe(remaining);
      expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThan(0);
      expect(Number(res.headers['ratelimit-reset'])).toBeLessThanOrEqual(60);
    }

    const refused = await call('/api', caller);
    expect(refused.status).toBe(429);
    expect(Object.keys(refused.body)).toEqual(['error']);
    expect(refused.body.error).toEqual({ code: 'rate_limited', message: expect.stringMatching(/^Too many requests; retry in \d+ seconds?\.$/) });
    expect(refused.text).not.toContain(caller);
    const retryAfter = refused.headers['retry-after'];
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter)).toBeLessThanOrEqual(60);
    expect(refused.headers['ratelimit-limit']).toBe('3');
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    expect(refused.headers['ratelimit-reset']).toBe(retryAfter);
  });

  it('counts each key on its own', async () => {
    const spent = fresh('spent');
    for (let i = 0; i < 4; i++) await call('/api', spent);
    expect((await call('/api', spent)).status).toBe(429);
    const other = await call('/api', fresh('other'));
    expect(other.status).toBe(200);
    expect(other.headers['ratelimit-remaining']).toBe('2');
  });

  it('counts each policy on its own, even for the same key', async () => {
    const caller = fresh('policies');
    for (let i = 0; i < 4; i++) await call('/api', caller);
    expect((await call('/api', caller)).status).toBe(429);
    const anonymous = await call('/anonymous', caller);
    expect(anonymous.status).toBe(200);
    expect(anonymous.headers['ratelimit-remaining']).toBe('2');
  });

  it('counts nothing and sets no headers when keyOf returns null', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await call('/api');
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-limit']).toBeUndefined();
    }
  });
});

describe('RateLimits', () => {
  it('peek reads without counting, and refuses once the points are spent', async () => {
    const account = fresh('peek');
    for (let i = 0; i < 3; i++) {
      expect(await limits.peek('signInAccount', account)).toEqual({ allowed: true, limit: 2, remaining: 2, resetSeconds: 0 });
    }
    await limits.consume('signInAccount', account);
    expect(await limits.peek('signInAccount', account)).toMatchObject({ allowed: true, remaining: 1 });
    expect(await limits.peek('signInAccount', account)).toMatchObject({ allowed: true, remaining: 1 });
    const last = await limits.consume('signInAccount', account);
    expect(last).toMatchObject({ allowed: true, remaining: 0 });
    const locked = await limits.peek('signInAccount', account);
    expect(locked).toMatchObject({ allowed: false, limit: 2, remaining: 0 });
    expect(locked.resetSeconds).toBeGreaterThan(0);
    expect(locked.resetSeconds).toBeLessThanOrEqual(60);
  });

  it('reset forgets the key, and only under its policy', async () => {
    const account = fresh('reset');
    for (let i = 0; i < 3; i++) await limits.consume('signInAccount', account);
    await limits.consume('api', account);
    expect((await limits.consume('signInAccount', account)).allowed).toBe(false);

    await limits.reset('signInAccount', account);
    expect(await limits.peek('signInAccount', account)).toMatchObject({ allowed: true, remaining: 2 });
    expect(await limits.consume('signInAccount', account)).toMatchObject({ allowed: true, remaining: 1 });
    expect(await limits.peek('api', account)).toMatchObject({ remaining: 2 });
    await expect(limits.reset('signInAccount', fresh('never-seen'))).resolves.toBeUndefined();
  });

  it('starts a new window once durationSeconds have passed', async () => {
    const ip = fresh('window');
    expect((await limits.consume('signInIp', ip)).allowed).toBe(true);
    const refused = await limits.consume('signInIp', ip);
    expect(refused).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 1 });
    await sleep(1100);
    expect(await limits.consume('signInIp', ip)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it(`keeps its counters ${provider === 'postgresql' ? 'in the RateLimit table, prefixed with the policy' : 'in memory'}`, async () => {
    const account = fresh('store');
    await limits.consume('signInAccount', account);
    await limits.poll(account, 1);
    const rows = await database.db.rateLimit.findMany();
    if (provider === 'sqlite') return expect(rows).toEqual([]);
    expect(rows.find((row) => row.key === `signInAccount:${account}`)).toMatchObject({ points: 1 });
    // The device code is a credential: only its hash is stored.
    expect(rows.some((row) => row.key.startsWith('devicePoll:'))).toBe(true);
    expect(rows.filter((row) => row.key.includes(account))).toHaveLength(1);
  });

  onPostgres('shares counts between instances on the same database', async () => {
    const one = createRateLimits({ db: database.db, provider, policies: POLICIES });
    const two = createRateLimits({ db: database.db, provider, policies: POLICIES });
    const account = fresh('shared');
    expect(await one.consume('signInAccount', account)).toMatchObject({ allowed: true, remaining: 1 });
    expect(await two.consume('signInAccount', account)).toMatchObject({ allowed: true, remaining: 0 });
    expect((await one.consume('signInAccount', account)).allowed).toBe(false);
    expect((await two.peek('signInAccount', account)).allowed).toBe(false);
    await one.reset('signInAccount', account);
    expect((await two.peek('signInAccount', account)).allowed).toBe(true);

    const code = randomUUID();
    expect(await one.poll(code, 1)).toBe('ok');
    expect(await two.poll(code, 1)).toBe('slow_down');
  });

  it('counts concurrent requests exactly', async () => {
    const account = fresh('race');
    const decisions = await Promise.all(Array.from({ length: 10 }, () => limits.consume('api', account)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(3);
    const codes = await Promise.all(Array.from({ length: 5 }, () => limits.poll(account, 1)));
    expect(codes.filter((c) => c === 'ok')).toHaveLength(1);
  });

  it('refuses a policy that is not a budget (0 points is one: off)', () => {
    const db = database.db;
    expect(() => createRateLimits({ db, provider, policies: { api: { points: -1, durationSeconds: 60 } } })).toThrow(/policy api/);
    expect(() => createRateLimits({ db, provider, policies: { api: { points: 1.5, durationSeconds: 60 } } })).toThrow(/policy api/);
    expect(() => createRateLimits({ db, provider, policies: { registration: { points: 1, durationSeconds: 0 } } })).toThrow(/policy registration/);
    const off = createRateLimits({ db, provider, policies: { api: { points: 0, durationSeconds: 60 } } });
    expect(off.isOn('api')).toBe(false);
    expect(off.isOn('apiIp')).toBe(true);
  });
});

describe('device code polling (RFC 8628)', () => {
  it('answers ok to the first poll and slow_down to one that comes at once, per device code', async () => {
    const code = randomUUID();
    expect(await limits.poll(code, 1)).toBe('ok');
    expect(await limits.poll(code, 1)).toBe('slow_down');
    expect(await limits.poll(randomUUID(), 1)).toBe('ok');
  });

  it('answers ok after the interval, unless a slow_down has added 5 s to it', async () => {
    const patient = randomUUID();
    const hasty = randomUUID();
    expect(await limits.poll(patient, 1)).toBe('ok');
    expect(await limits.poll(hasty, 1)).toBe('ok');
    expect(await limits.poll(hasty, 1)).toBe('slow_down');
    await sleep(1100);
    expect(await limits.poll(patient, 1)).toBe('ok');
    expect(await limits.poll(hasty, 1)).toBe('slow_down');
  });
});

describe('when the store fails', () => {
  it('keeps counting in memory, so the limits still hold, and logs nothing of the key', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
    // A real PostgreSQL client pointed at a port where nothing listens.
    const db = await createDb('postgresql://postgres@127.0.0.1:1/nowhere');
    try {
      const down = createRateLimits({ db, provider: 'postgresql', policies: { api: { points: 1, durationSeconds: 60 } }, logger });
      const secret = fresh('secret');
      expect(await down.consume('api', secret)).toMatchObject({ allowed: true, limit: 1, remaining: 0 });
      expect(await down.consume('api', secret)).toMatchObject({ allowed: false, remaining: 0 });
      await expect(down.reset('api', secret)).resolves.toBeUndefined();
      expect(await down.poll(secret, 1)).toBe('ok');
      expect(await down.poll(secret, 1)).toBe('slow_down');
      const caller = fresh('caller');
      expect((await request(appWith(down)).get('/api').set('x-caller', caller)).status).toBe(200);
      expect((await request(appWith(down)).get('/api').set('x-caller', caller)).status).toBe(429);
      for (const line of lines) expect(line).not.toContain(secret);
    } finally {
      await db.$disconnect();
    }
  });
});

describe('API limits from the configuration', () => {
  async function statuses(rateLimits: { api: number; apiAddress: number }, count: number) {
    const app = await startTestApp({ rateLimits });
    try {
      const owner = await createOwner(app.database.db);
      const authorization = `Bearer ${await accessToken(app, owner, { scopes: ['flows:read'] })}`;
      const answers = [];
      for (let i = 0; i < count; i++) answers.push(await request(app.app).get('/api/v1/me').set('authorization', authorization));
      return answers;
    } finally {
      await app.close();
    }
  }

  it('refuses the request past FLOWS_RATE_LIMIT_API per credential', async () => {
    const answers = await statuses({ api: 2, apiAddress: 0 }, 3);
    expect(answers.map((res) => res.status)).toEqual([200, 200, 429]);
    expect(answers[0].headers['ratelimit-limit']).toBe('2');
  });

  it('refuses the request past FLOWS_RATE_LIMIT_API_ADDRESS per address', async () => {
    expect((await statuses({ api: 0, apiAddress: 2 }, 3)).map((res) => res.status)).toEqual([200, 200, 429]);
  });

  it('counts nothing when both are 0', async () => {
    const answers = await statuses({ api: 0, apiAddress: 0 }, 25);
    expect(answers.every((res) => res.status === 200 && res.headers['ratelimit-limit'] === undefined)).toBe(true);
  });
});
