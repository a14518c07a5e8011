// Globs where `*` stands for any run of characters (every other character stands for itself), matched
// without a regular expression: a backtracking engine turns `a*a*a*a*b` into exponential work on a long
// name, while this walk backs up only to the last `*`, so it takes at most (|text| + 1) × (|pattern| + 1)
// steps, and about |text| for the patterns people write.

/** Whether `pattern` matches the whole of `text`, and how many steps it took (for tests of the bound). */
export function globMatch(pattern: string, text: string): { matched: boolean; steps: number } {
  let p = 0;
  let t = 0;
  let star = -1; // the last `*` met, and where in `text` its run of characters currently ends
  let resume = 0;
  let steps = 0;
  while (t < text.length) {
    steps += 1;
    if (pattern[p] === '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.length && pattern[p] === text[t]) {
      p += 1;
      t += 1;
    } else if (star >= 0) {
      // The last `*` takes one more character and what follows it is tried again from there; an earlier
      // `*` never needs to: whatever it could take, the later one can take instead.
      p = star + 1;
      t = ++resume;
    } else {
      return { matched: false, steps };
    }
  }
  while (pattern[p] === '*') p += 1;
  return { matched: p === pattern.length, steps };
}

/** Whether `pattern` (with `*`) matches the whole of `text`. */
export const globMatches = (pattern: string, text: string): boolean => globMatch(pattern, text).matched;
