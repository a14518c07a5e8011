// Work on tenant input that no estimate made at save can see (it grows with the delivery: the characters a
// regular expression or a string function goes through) is charged as it happens to the meter of the
// evaluation under way, which stops the evaluation once its budget is spent. Evaluations are synchronous,
// so one meter is active at a time; a meter opened inside another shares the outer budget.

/**
 * Steps one evaluation (or compilation) may take: a character a string function reads, a character ×
 * instruction a regular expression matches (RE2's worst case), 40 an instruction it compiles. About half a
 * second at the slowest, tens of milliseconds usually.
 */
export const WORK_LIMIT = 25_000_000;

export class WorkLimitExceeded extends Error {
  constructor() {
    super(`it would take more than ${WORK_LIMIT.toLocaleString('en')} steps (long texts under large patterns, many patterns, or many string calls)`);
  }
}

let left: number | null = null;
let spent = false;

/** Counts `steps` against the active meter (with none, against one call's budget); throws once the budget is spent. */
export function charge(steps: number): void {
  if (left === null) {
    if (steps > WORK_LIMIT) throw new WorkLimitExceeded();
    return;
  }
  left -= steps;
  if (left < 0) {
    spent = true;
    throw new WorkLimitExceeded();
  }
}

/**
 * Runs `evaluate` under a fresh budget of WORK_LIMIT; throws WorkLimitExceeded when it was spent, even when
 * the evaluation caught the error itself (a CEL function's error can be absorbed by `||`).
 */
export function metered<T>(evaluate: () => T): T {
  if (left !== null) return evaluate();
  left = WORK_LIMIT;
  spent = false;
  try {
    const value = evaluate();
    if (spent) throw new WorkLimitExceeded();
    return value;
  } finally {
    left = null;
  }
}
