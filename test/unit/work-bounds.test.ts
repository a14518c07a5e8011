// Work on tenant input that grows with a delivery stays bounded: regular expressions bounded at compile and
// charged per match, CEL's string functions charged as they run, input schema patterns likewise. Each case
// here took seconds to minutes before; now each is a quick error, while ordinary uses answer as before.
import { compileInputSchema, InputSchemaProblem } from '../../src/jobs/input-schema-fns';
import { charge, metered, WORK_LIMIT, WorkLimitExceeded } from '../../src/lib/work-meter';
import { CelProblem, compileCel, contextSize } from '../../src/triggers/cel-fns';
import { decide } from '../../src/triggers/conditions-fns';
import { compileRegex, REGEX_LIMITS } from '../../src/triggers/regex';

/**
 * `fn`'s result and the CPU time it took this process, in milliseconds: the work done, which other work on
 * a loaded machine (parallel test files) does not stretch as it stretches wall time.
 */
function timed<T>(fn: () => T): [T, number] {
  const started = process.cpuUsage();
  const value = fn();
  const { user, system } = process.cpuUsage(started);
  return [value, (user + system) / 1000];
}

// A pattern on which RE2's DFA gives up: its NFA then takes about 20 ns per character × instruction.
const EXPLODING = '(?:a[ab]{0,10}){10}[^ab]';
const AB = 'ab'.repeat(100_000);

describe('the work meter', () => {
  it('stops an evaluation once its budget is spent, even when the evaluation caught the error', () => {
    expect(metered(() => (charge(WORK_LIMIT), 'within'))).toBe('within');
    expect(() => metered(() => charge(WORK_LIMIT + 1))).toThrow(WorkLimitExceeded);
    expect(() =>
      metered(() => {
        try {
          charge(WORK_LIMIT + 1);
        } catch {
          // absorbed, as CEL absorbs an error under `||`
        }
        return true;
      }),
    ).toThrow(WorkLimitExceeded);
    // Outside a meter, one call is held to the budget on its own.
    expect(() => charge(WORK_LIMIT + 1)).toThrow(WorkLimitExceeded);
    expect(() => charge(WORK_LIMIT)).not.toThrow();
  });
});

describe('regular expressions', () => {
  it('are refused when long or compiled large, and otherwise match as before', () => {
    expect(() => compileRegex('a'.repeat(REGEX_LIMITS.length + 1))).toThrow(`the pattern is ${REGEX_LIMITS.length + 1} characters long; at most ${REGEX_LIMITS.length}`);
    expect(() => compileRegex('(?:[ab]{0,20}a){1,40}[^ab]')).toThrow('the pattern compiles to 1682 instructions; at most 1000');
    expect([compileRegex('^v\\d+\\.\\d+').test('v1.2'), compileRegex('b').test('abc'), compileRegex('^b').test('abc')]).toEqual([true, true, false]);
  });

  it('answer a condition error, quickly, for a text too long for the pattern', () => {
    const [decision, ms] = timed(() => decide({ all: [{ path: 'payload.body', op: 'matches', value: EXPLODING }] }, { payload: { body: AB } }));
    expect(decision.decision).toBe('error');
    expect((decision as { error: string }).error).toMatch(/^conditions: it would take more than 25,000,000 steps/);
    expect(ms).toBeLessThan(500);
    // The same pattern on a short text, and an everyday pattern on the long one, answer as before.
    expect(decide({ all: [{ path: 'payload.body', op: 'matches', value: EXPLODING }] }, { payload: { body: `${'a'.repeat(10)}!` } }).decision).toBe('match');
    expect(decide({ all: [{ path: 'payload.body', op: 'matches', value: 'b!$' }] }, { payload: { body: AB } }).decision).toBe('no-match');
  });
});

describe('CEL', () => {
  const context = { payload: { items: Array.from({ length: 900 }, (_, i) => i), body: 'x'.repeat(900_000) } };
  const size = contextSize(context);
  const evaluate = (expression: string) => timed(() => compileCel(expression).evaluate(context, size));

  it.each([
    // 92 s before: the estimate counts the 900 calls, not the 3.6 MB each one reads.
    ['payload.items.all(i, size(payload.body + payload.body + payload.body + payload.body) > 0)', 'CEL work limit exceeded'],
    ['payload.items.all(i, !payload.body.contains("y"))', 'CEL work limit exceeded'],
    [`payload.items.all(i, !payload.body.matches("${EXPLODING}"))`, 'CEL work limit exceeded'],
    ['payload.items.all(i, !payload.body.matches("(?:[ab]{0,20}a){1,40}[^ab]"))', 'CEL evaluation error: the pattern compiles to 1682 instructions'],
  ])('stops %s quickly', (expression, error) => {
    const [outcome, ms] = evaluate(expression);
    expect(outcome).toMatchObject({ ok: false });
    expect((outcome as { error: string }).error.startsWith(error)).toBe(true);
    expect(ms).toBeLessThan(1_000);
  });

  it.each([
    ['size(payload.body) == 900000', true],
    ['payload.body.startsWith("xx") && payload.body.endsWith("x") && !payload.body.contains("y")', true],
    ['payload.items.exists(i, i == 899.0)', true],
    ['payload.body.matches("^x+$")', true],
    ['size(payload.items + [1.0]) == 901', true],
  ])('answers %s as before', (expression, value) => {
    expect(evaluate(expression)[0]).toEqual({ ok: true, value });
  });

  it('still refuses what is too large before running it', () => {
    expect(() => compileCel('x'.repeat(10) + '('.repeat(2000))).toThrow(CelProblem);
  });
});

describe('input schemas', () => {
  it('refuse many large patterns before compiling them all', () => {
    const properties = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`p${i}`, { type: 'string', pattern: `[a-z]{900}${i}` }]));
    const [problem, ms] = timed(() => {
      try {
        compileInputSchema({ type: 'object', properties });
        return null;
      } catch (err) {
        return err as InputSchemaProblem;
      }
    });
    expect(problem).toBeInstanceOf(InputSchemaProblem);
    expect(problem!.message).toMatch(/it would take more than 25,000,000 steps/);
    expect(problem!.pointer).toMatch(/^\/properties\/p\d+\/pattern$/);
    expect(ms).toBeLessThan(2_000);
  });

  it('refuse data too long for their patterns as invalid, quickly, and validate the rest as before', () => {
    const validate = compileInputSchema({ type: 'object', properties: { body: { type: 'string', pattern: EXPLODING } } });
    const [valid, ms] = timed(() => validate({ body: AB }));
    expect(valid).toBe(false);
    expect(validate.errors?.[0].message).toMatch(/^is too costly to check against the schema's patterns/);
    expect(ms).toBeLessThan(500);
    expect(validate({ body: `${'a'.repeat(10)}!` })).toBe(true);
    expect(validate({ body: 'nope' })).toBe(false);
    expect(validate.errors?.[0].keyword).toBe('pattern');
  });
});
