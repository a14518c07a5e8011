// Event patterns: `*` globs matched by a walk that backs up only to the last `*`, so a pattern that made a
// backtracking regular expression take seconds takes steps in proportion to the name; and the bounds a
// pattern is held to when it is saved.
import { performance } from 'node:perf_hooks';
import { globMatch } from '../../src/lib/glob';
import { EVENT_PATTERN_LIMITS, eventPatternProblem, matchesEvents } from '../../src/triggers/event-patterns-fns';

describe('globMatch', () => {
  it.each([
    ['*', '', true],
    ['*', 'push', true],
    ['', '', true],
    ['', 'x', false],
    ['push', 'push', true],
    ['push', 'pushed', false],
    ['issues.*', 'issues.labeled', true],
    ['issues.*', 'issues.', true],
    ['issues.*', 'issues', false],
    ['*.labeled', 'pull_request.labeled', true],
    ['*.labeled', 'labeled', false],
    ['a*b*c', 'abc', true],
    ['a*b*c', 'aXXbYYc', true],
    ['a*b*c', 'acb', false],
    ['a*b*c', 'abcb', false],
    ['a*bc', 'abcbc', true],
    ['*ab', 'aab', true],
    ['**', 'anything', true],
    ['a**b', 'ab', true],
    ['*a*', 'bab', true],
    ['*a*', 'bbb', false],
    ['is(sues.*', 'is(sues.x', true],
    ['pull_request.*', 'pull_requestXopened', false],
    ['[a-z]*', 'b', false],
    ['Issues.*', 'issues.opened', false],
    ['a*a*a*a*a*b', `${'a'.repeat(200)}b`, true],
    ['a*a*a*a*a*b', 'a'.repeat(200), false],
  ])('%j against %j: %s', (pattern, text, expected) => {
    expect(globMatch(pattern, text).matched).toBe(expected);
  });

  it('takes steps in proportion to the name where a backtracking expression took exponential time', () => {
    const name = 'a'.repeat(10_000);
    const started = performance.now();
    const { matched, steps } = globMatch('a*a*a*a*a*b', name);
    const ms = performance.now() - started;
    expect(matched).toBe(false);
    // The regular expression this replaced had not finished after minutes on this name (26 s on 200 `a`).
    expect(steps).toBeLessThanOrEqual(2 * name.length);
    expect(ms).toBeLessThan(200);
  });

  it('never takes more than (|name| + 1) × (|pattern| + 1) steps, whatever the pattern', () => {
    const cases: [string, string][] = [
      [`*${'a'.repeat(50)}b`, 'a'.repeat(5_000)],
      [`${'*a'.repeat(100)}b`, 'a'.repeat(401)],
      [`*${'ab'.repeat(20)}*c`, 'ab'.repeat(2_000)],
    ];
    for (const [pattern, name] of cases) {
      const { matched, steps } = globMatch(pattern, name);
      expect(matched).toBe(false);
      expect(steps).toBeLessThanOrEqual((name.length + 1) * (pattern.length + 1));
    }
  });
});

describe('matchesEvents', () => {
  it.each([
    [['issues.labeled'], 'issues.labeled', true],
    [['issues.opened', 'push'], 'push', true],
    [['issues.*'], 'pull_request.opened', false],
    [[], 'push', false],
  ])('%j matches %s: %s', (patterns, name, expected) => {
    expect(matchesEvents(patterns, name)).toBe(expected);
  });

  it('matches a pattern saved before the bounds, as linearly', () => {
    const stored = 'a*'.repeat(40) + 'b';
    expect(eventPatternProblem(stored)).not.toBeNull();
    expect(matchesEvents([stored], 'a'.repeat(401))).toBe(false);
    expect(matchesEvents([stored], `${'a'.repeat(400)}b`)).toBe(true);
  });
});

describe('eventPatternProblem', () => {
  it.each([
    ['issues.labeled', null],
    ['*', null],
    ['*'.repeat(EVENT_PATTERN_LIMITS.wildcards), null],
    ['a*'.repeat(12), 'has 12 wildcards (`*`); at most 8'],
    ['x'.repeat(201), 'is 201 characters long; at most 200'],
  ])('%j: %j', (pattern, problem) => {
    expect(eventPatternProblem(pattern)).toBe(problem);
  });
});
