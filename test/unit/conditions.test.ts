// Conditions, table by table: every operator, paths with [n] and [*], CEL true, false, error, non-boolean
// and over its cost limit, refused regular expressions, and conditions that do not compile.
import { CEL_COST_LIMIT } from '../../src/triggers/cel-fns';
import { decide } from '../../src/triggers/conditions-fns';

const context = {
  event: 'issues',
  action: 'labeled',
  payload: {
    issue: { number: 42, title: 'Saving twice crashes', locked: false, labels: [{ name: 'bug' }, { name: 'agent' }], user: { login: 'octocat' }, created_at: '2025-06-04T08:21:53Z' },
    repository: { full_name: 'acme/widgets' },
    empty: null,
  },
  headers: { 'x-github-event': 'issues' },
};
const leaf = (path: string, op: string, value?: unknown) => decide({ all: [{ path, op, ...(value === undefined ? {} : { value }) }] }, context);
const decisionOf = (path: string, op: string, value?: unknown) => leaf(path, op, value).decision;

describe('operators', () => {
  it.each([
    ['event', 'eq', 'issues', 'match'],
    ['event', 'eq', 'pull_request', 'no-match'],
    ['payload.issue.number', 'eq', 42, 'match'],
    ['payload.issue.labels[0]', 'eq', { name: 'bug' }, 'match'],
    ['event', 'neq', 'push', 'match'],
    ['event', 'neq', 'issues', 'no-match'],
    ['action', 'in', ['opened', 'labeled'], 'match'],
    ['action', 'in', ['opened'], 'no-match'],
    ['action', 'nin', ['opened'], 'match'],
    ['action', 'nin', ['labeled'], 'no-match'],
    ['payload.issue.title', 'contains', 'twice', 'match'],
    ['payload.issue.labels', 'contains', { name: 'agent' }, 'match'],
    ['payload.issue.labels', 'contains', { name: 'wontfix' }, 'no-match'],
    ['payload.repository.full_name', 'startsWith', 'acme/', 'match'],
    ['payload.issue.user.login', 'endsWith', '[bot]', 'no-match'],
    ['payload.issue.title', 'matches', '^Saving\\s+\\w+', 'match'],
    ['payload.issue.title', 'matches', '^crash', 'no-match'],
    ['payload.issue.number', 'gt', 41, 'match'],
    ['payload.issue.number', 'gte', 42, 'match'],
    ['payload.issue.number', 'lt', 42, 'no-match'],
    ['payload.issue.number', 'lte', 42, 'match'],
    ['payload.issue.created_at', 'gt', '2025-01-01T00:00:00Z', 'match'],
    ['payload.issue.number', 'gt', '41', 'no-match'],
    ['payload.issue.number', 'exists', undefined, 'match'],
    ['payload.issue.missing', 'exists', true, 'no-match'],
    ['payload.issue.missing', 'exists', false, 'match'],
    ['payload.empty', 'exists', true, 'match'],
  ])('%s %s %j → %s', (path, op, value, expected) => {
    expect(decisionOf(path, op, value)).toBe(expected);
  });

  it('makes a leaf on a missing path false, whatever its operator', () => {
    for (const op of ['eq', 'neq', 'nin', 'contains', 'gt']) expect(decisionOf('payload.nothing.here', op, op === 'nin' ? ['x'] : 'x')).toBe('no-match');
  });
});

describe('paths', () => {
  it('selects every element with [*]: the leaf holds when one holds, and the detail shows them all', () => {
    const decision = leaf('payload.issue.labels[*].name', 'eq', 'agent');
    expect(decision).toEqual({
      decision: 'match',
      details: [{ part: 'all', path: 'payload.issue.labels[*].name', op: 'eq', expected: 'agent', actual: ['bug', 'agent'], result: true }],
    });
    expect(decisionOf('payload.issue.labels[*].name', 'eq', 'wontfix')).toBe('no-match');
    expect(decisionOf('payload.issue.labels[1].name', 'eq', 'agent')).toBe('match');
    expect(decisionOf('payload.issue.labels[5].name', 'exists')).toBe('no-match');
    expect(decisionOf('headers.x-github-event', 'eq', 'issues')).toBe('match');
  });

  it.each(['payload..issue', 'payload.issue[', 'payload.issue[x]', '.event', 'event.', 'pay load'])('refuses the bad path %j as an error', (path) => {
    const decision = leaf(path, 'eq', 1);
    expect(decision.decision).toBe('error');
    expect(decision.error).toContain('bad path');
    expect(decision.details).toEqual([expect.objectContaining({ part: 'all', path, result: false })]);
  });
});

describe('parts', () => {
  it('holds when all hold, any has one, none has none, and if is true; one detail per leaf', () => {
    const decision = decide(
      {
        all: [{ path: 'event', op: 'eq', value: 'issues' }],
        any: [{ path: 'action', op: 'eq', value: 'opened' }, { path: 'action', op: 'eq', value: 'labeled' }],
        none: [{ path: 'payload.issue.user.login', op: 'endsWith', value: '[bot]' }],
        if: 'payload.repository.full_name == "acme/widgets" && !payload.issue.locked',
      },
      context,
    );
    expect(decision.decision).toBe('match');
    expect(decision.details.map((d) => [d.part, d.result])).toEqual([['all', true], ['any', false], ['any', true], ['none', false], ['if', true]]);
  });

  it('fails on a none leaf that holds, and ignores an empty any', () => {
    expect(decide({ none: [{ path: 'event', op: 'eq', value: 'issues' }] }, context).decision).toBe('no-match');
    expect(decide({ any: [] }, context)).toEqual({ decision: 'match', details: [] });
  });

  it('matches without conditions, with empty details', () => {
    expect(decide(undefined, context)).toEqual({ decision: 'match', details: [] });
  });
});

describe('CEL', () => {
  const cel = (expression: string, ctx: Record<string, unknown> = context) => decide({ if: expression }, ctx);

  it('gives true and false as match and no-match, with the value in the detail', () => {
    expect(cel('payload.issue.number > 41')).toEqual({ decision: 'match', details: [{ part: 'if', expected: 'payload.issue.number > 41', actual: true, result: true }] });
    expect(cel('payload.issue.labels.exists(l, l.name == "wontfix")').decision).toBe('no-match');
    expect(cel('payload.issue.title.matches("^Saving")').decision).toBe('match');
  });

  it.each([
    ['payload.issue.number + 1 > 2', 'JSON numbers are doubles'],
    ['payload.issue.nothing == 1', 'CEL evaluation error'],
    ['unknown_variable', 'CEL: `unknown_variable` (column 1) is not in the context, whose names are `event`, `action`, `payload` and `headers`'],
    ['payload.issue.number > 1 && webhook.payload.x', 'CEL: `webhook` (column 29) is not in the context'],
    ['payload.issue.title.matches("(a)\\\\1")', 'CEL evaluation error'],
  ])('answers error for %s', (expression, message) => {
    const decision = cel(expression);
    expect(decision.decision).toBe('error');
    expect(decision.error).toContain(message);
    expect(decision.details).toEqual([expect.objectContaining({ part: 'if', expected: expression, result: false })]);
  });

  it('treats a name the context lacks as CEL does: an error where it is read, absorbed by `||` and `&&`', () => {
    expect(cel('x || true')).toEqual({ decision: 'match', details: [{ part: 'if', expected: 'x || true', actual: true, result: true }] });
    expect(cel('false && webhook.payload.x').decision).toBe('no-match');
    expect(cel('a.if() || true').decision).toBe('match');
    expect(cel('x || false')).toMatchObject({ decision: 'error', error: 'CEL: `x` (column 1) is not in the context, whose names are `event`, `action`, `payload` and `headers`' });
    expect(cel('payload.issue.number > 1.0 && webhook.x == 1')).toMatchObject({ decision: 'error', error: expect.stringMatching(/^CEL: `webhook` \(column 31\) is not in the context/) });
    // Names the context holds, or that an expression binds itself, are no such error.
    expect(cel('payload.issue.nothing == 1').error).toMatch(/^CEL evaluation error/);
    expect(cel('payload.issue.labels.exists(l, l.name == "bug")').decision).toBe('match');
  });

  it('compares bytes literals holding control characters', () => {
    expect(cel("b'\u0001' > b''").decision).toBe('match');
    expect(cel("b'\u0001\u0002' < b'\u0002'").decision).toBe('match');
  });

  it('answers error for a result that is not a boolean', () => {
    const decision = cel('payload.issue.title');
    expect(decision).toMatchObject({ decision: 'error', error: 'the `if` expression must evaluate to a boolean', details: [{ part: 'if', actual: 'Saving twice crashes', result: false }] });
  });

  it.each([
    ['payload.issue.labels', [{ name: 'bug' }, { name: 'agent' }]],
    ['payload.issue.labels.map(l, size(l.name))', [3, 5]],
    ['payload.issue.user', { login: 'octocat' }],
    ['b"ab"', 'YWI='],
    ['2u', 2],
  ])('shows a %s result that is not a boolean as plain JSON', (expression, actual) => {
    const decision = cel(expression);
    expect(decision).toMatchObject({ decision: 'error', error: 'the `if` expression must evaluate to a boolean', details: [{ part: 'if', actual, result: false }] });
    expect(JSON.parse(JSON.stringify(decision))).toEqual(decision);
  });

  it('shows no actual for a result with no plain JSON form', () => {
    for (const expression of ['timestamp(payload.issue.created_at)', 'duration("1s")']) {
      const decision = cel(expression);
      expect(decision.decision).toBe('error');
      expect(decision.details[0]).not.toHaveProperty('actual');
      expect(() => JSON.stringify(decision)).not.toThrow();
    }
  });

  it('answers error for a syntax error, naming the part', () => {
    expect(cel('payload.issue.number >')).toMatchObject({ decision: 'error', error: expect.stringMatching(/^if: CEL parse error/) });
  });

  it('refuses, before running it, an expression whose cost over the context exceeds the limit', () => {
    const big = { payload: { items: Array.from({ length: 3000 }, (_, i) => i) } };
    const nested = 'payload.items.all(a, payload.items.all(b, a + b >= 0.0))';
    const decision = cel(nested, big);
    expect(decision).toMatchObject({ decision: 'error', error: expect.stringContaining(`cost limit`) });
    expect(decision.error).toContain(String(CEL_COST_LIMIT));
    // The same expression over a small context is cheap enough to run.
    expect(cel(nested, { payload: { items: [1, 2, 3] } }).decision).toBe('match');
  });
});

describe('conditions that do not compile', () => {
  it.each([
    [{ all: [{ path: 'event', op: 'equals', value: 'x' }] }, 'all[0]: unknown op "equals"'],
    [{ all: [{ path: 'event', op: 'in', value: 'x' }] }, 'all[0]: `in` needs an array value'],
    [{ any: [{ path: 'event', op: 'matches', value: '(a)\\1' }] }, 'any[0]: the regular expression is refused'],
    [{ none: [{ path: 'event', op: 'matches', value: '(?=x)' }] }, 'none[0]: the regular expression is refused'],
    [{ all: [{ path: 'event', op: 'gt', value: true }] }, 'all[0]: `gt` needs a number or a string value'],
    [{ all: [{ path: 'event', op: 'exists', value: 'yes' }] }, 'all[0]: `exists` takes true, false or no value'],
    [{ all: [{ op: 'eq', value: 1 }] }, 'all[0]: `path` must be a string'],
    [{ all: [{ path: 'event', op: 'eq', colour: 1 }] }, 'all[0]: unknown property `colour`'],
    [{ all: 'event' }, 'all: must be an array'],
    [{ every: [] }, 'unknown part `every`'],
    [{ if: 42 }, 'if: must be a CEL expression'],
  ])('%j → error "%s"', (conditions, message) => {
    const decision = decide(conditions, context);
    expect(decision.decision).toBe('error');
    expect(decision.error).toContain(message);
    expect(decision.details).toHaveLength(1);
    expect(decision.details[0].result).toBe(false);
  });
});

describe('regular expressions from callers', () => {
  it('compile as often as callers send them without exhausting memory (each test request compiles anew)', () => {
    for (let i = 0; i < 20_000; i++) {
      expect(decide({ all: [{ path: 'event', op: 'matches', value: `^iss(ues)?${i}?` }], if: `event.matches("^i${i}?")` }, context).decision).not.toBe('error');
    }
  });

  it('match in linear time where a backtracking engine would not finish', () => {
    const started = Date.now();
    expect(decide({ all: [{ path: 'text', op: 'matches', value: '^(a+)+$' }] }, { text: `${'a'.repeat(50_000)}!` }).decision).toBe('no-match');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('conditions compiled before', () => {
  it('give the same answers from the cache, valid or not, for any context', () => {
    const good = { all: [{ path: 'a', op: 'eq', value: 1 }], if: 'a > 0.0' };
    expect(decide(good, { a: 1 }).decision).toBe('match');
    expect(decide(good, { a: 2 }).decision).toBe('no-match');
    expect(decide(structuredClone(good), { a: 1 })).toEqual(decide(good, { a: 1 }));
    const bad = { if: 'a +' };
    const first = decide(bad, { a: 1 });
    expect(first.decision).toBe('error');
    expect(decide(bad, { a: 2 })).toEqual(first);
  });
});
