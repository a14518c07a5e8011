import { containsUnstorableText } from '../../src/http/body';
import { matchesEvents } from '../../src/triggers/event-patterns-fns';
import { RECORDED_ACTUAL, triggerDecision } from '../../src/triggers/acts-fns';
import { isReplay, replayHash } from '../../src/webhooks/webhooks-fns';

describe('event patterns', () => {
  it.each([
    [['issues.labeled'], 'issues.labeled', true],
    [['issues.labeled'], 'issues.labeled.extra', false],
    [['pull_request.*'], 'pull_request.opened', true],
    [['pull_request.*'], 'pull_requestXopened', false],
    [['*'], 'push', true],
    [['Issue.*', 'push'], 'push', true],
    [['is(sues'], 'is(sues', true],
  ])('%j matches %s: %s', (patterns, name, expected) => {
    expect(matchesEvents(patterns as string[], name as string)).toBe(expected);
  });
});

describe('recorded decisions', () => {
  const detailWith = (actual: unknown) => triggerDecision('trg_x', { decision: 'no-match', details: [{ part: 'all', path: 'payload.x', op: 'eq', expected: 'y', actual, result: false }] }).details[0];

  it.each([
    ['a short string', 'agent'],
    ['a number', 42],
    ['a small object', { name: 'bug' }],
    ['a string of 83 characters', 'x'.repeat(83)],
  ])('keeps %s as it is', (_, actual) => {
    expect(detailWith(actual).actual).toEqual(actual);
  });

  it.each([
    ['a long string', 'Steps to reproduce. '.repeat(40)],
    ['a string short in characters but long in JSON', '"\n'.repeat(200)],
    ['a large array', Array.from({ length: 200 }, (_, i) => ({ name: `label-${i}` }))],
  ])('cuts %s to the first 500 characters of its JSON', (_, actual) => {
    expect(detailWith(actual).actual).toBe(`${JSON.stringify(actual).slice(0, RECORDED_ACTUAL)}…`);
  });

  it('never cuts between the halves of a surrogate pair', () => {
    for (let pad = 0; pad < 4; pad++) {
      const cut = detailWith(`${'x'.repeat(pad)}${'😀'.repeat(400)}`).actual as string;
      expect(cut.length).toBeLessThanOrEqual(RECORDED_ACTUAL + 1);
      expect(containsUnstorableText(cut)).toBe(false);
    }
  });

  it('keeps the decision and its error', () => {
    expect(triggerDecision('trg_x', { decision: 'error', error: 'if: bad', details: [] })).toEqual({ triggerId: 'trg_x', decision: 'error', error: 'if: bad', details: [] });
  });
});

describe('replays', () => {
  const body = Buffer.from('{"action":"labeled"}');

  it.each([
    ['github', true],
    ['linear', true],
    ['hmac-sha256', true],
    ['standard-webhooks', false],
  ] as const)('a %s body is hashed for replays: %s', (format, hashed) => {
    const hash = replayHash(format, body);
    expect(hash === null).toBe(!hashed);
    if (hashed) expect(hash).toBe(replayHash(format, Buffer.from('{"action":"labeled"}')));
  });

  it('tells bodies apart by every byte', () => {
    expect(replayHash('github', body)).not.toBe(replayHash('github', Buffer.from('{"action":"labeled" }')));
  });

  it.each([
    [0, true],
    [59_999, true],
    [60_000, false],
    [3_600_000, false],
  ])('a body first recorded %i ms earlier, with a window of 60 s, is a replay: %s', (ago, replay) => {
    const at = new Date('2026-01-01T12:00:00Z');
    expect(isReplay({ receivedAt: new Date(at.getTime() - ago) }, at, 60_000)).toBe(replay);
  });
});
