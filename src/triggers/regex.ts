// Regular expressions from tenants (conditions' `matches`, CEL's `matches()`, input schemas' `pattern` and
// `patternProperties`) run on RE2's algorithm (re2js, a JavaScript port): no backtracking, and patterns
// that would need it (backreferences, lookaround) are refused. Linear in the text, but times the size of
// the compiled program when RE2's DFA gives up and it falls back to its NFA (about 20 ns per character ×
// instruction: `(?:[ab]{0,20}a){1,40}[^ab]` took 6 s on 200,000 characters). So the pattern and its program
// are bounded at compile, compiling is charged to the work meter of the evaluation under way (about a
// microsecond an instruction: CEL compiles at each call), and each match is charged text length × program
// size. Compiled objects are ordinary garbage-collected values: compiling on every request gives back its memory.
import { RE2JS } from 're2js';
import { charge } from '../lib/work-meter';

/**
 * Characters of a pattern, and instructions of its compiled program, at most; everyday patterns compile to
 * a few dozen. A repetition expands to up to 1,000 copies, so the length also bounds compiling (~0.3 s).
 */
export const REGEX_LIMITS = { length: 2_000, program: 1_000 } as const;
const COMPILE_STEPS = 40; // work-meter steps (about 20 ns each) an instruction costs to compile

export interface Regex {
  test(text: string): boolean;
}

/** Compiles `pattern`; throws with RE2's reason when it refuses it, or when it compiles too large. */
export function compileRegex(pattern: string): Regex {
  if (pattern.length > REGEX_LIMITS.length) throw new Error(`the pattern is ${pattern.length} characters long; at most ${REGEX_LIMITS.length}`);
  const compiled = RE2JS.compile(pattern);
  const size = compiled.programSize();
  charge(size * COMPILE_STEPS);
  if (size > REGEX_LIMITS.program) throw new Error(`the pattern compiles to ${size} instructions; at most ${REGEX_LIMITS.program}`);
  return {
    test(text) {
      charge(text.length * size);
      // test() asks for no positions, so RE2 may answer with its DFA (one step per character) before its NFA.
      return compiled.test(text);
    },
  };
}
