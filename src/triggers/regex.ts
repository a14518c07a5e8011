// Regular expressions from conditions run on RE2's algorithm (re2js, a JavaScript port): linear time
// whatever the pattern and the input, and patterns that would need backtracking (backreferences,
// lookaround) are refused. Compiled objects are ordinary garbage-collected values, so compiling
// user-supplied patterns on every request costs no memory that is not given back.
import { RE2JS } from 're2js';

export interface Regex {
  test(text: string): boolean;
}

/** Compiles `pattern`; throws with RE2's reason when it refuses it. */
export function compileRegex(pattern: string): Regex {
  const compiled = RE2JS.compile(pattern);
  return { test: (text) => compiled.matcher(text).find() };
}
