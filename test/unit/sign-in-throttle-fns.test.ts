import { accountKey, freeAttempts, inWords, MAX_WAIT_SECONDS, pairKey, waitAfter } from '../../src/auth/sign-in-throttle-fns';

describe('waitAfter', () => {
  it.each([
    [1, 5, 0],
    [4, 5, 0],
    [5, 5, 1],
    [6, 5, 2],
    [7, 5, 4],
    [14, 5, 512],
    [15, 5, MAX_WAIT_SECONDS],
    [5000, 5, MAX_WAIT_SECONDS],
    [1, 1, 1],
    [2, 1, 2],
  ])('after attempt %i with %i free, the next waits %i s', (attempt, free, seconds) => {
    expect(waitAfter(attempt, free)).toBe(seconds);
  });
});

describe('freeAttempts', () => {
  it.each([
    [0, 100, 5],
    [100, 100, 5],
    [101, 100, 1],
    [101, 0, 5], // brake off
  ])('with %i failures of the account against a brake of %i, a pair has %i free', (accountFailures, accountBrake, free) => {
    expect(freeAttempts({ pairFree: 5, accountFailures, accountBrake })).toBe(free);
  });
});

it('keys counters by hashes of the email and of the pair, apart for every address', () => {
  expect(accountKey('a@example.test')).not.toContain('example');
  expect(pairKey('a@example.test', '203.0.113.1')).not.toBe(pairKey('a@example.test', '203.0.113.2'));
  expect(pairKey('a@example.test', '203.0.113.1')).not.toContain('203.0.113.1');
});

it.each([
  [0.2, '1 second'],
  [1, '1 second'],
  [4, '4 seconds'],
  [89, '89 seconds'],
  [90, '2 minutes'],
  [900, '15 minutes'],
])('says a wait of %d s as "%s"', (seconds, words) => {
  expect(inWords(seconds)).toBe(words);
});
