import { closest, distance } from 'fastest-levenshtein';

/** What a message quotes of a caller's input is cut to this many characters: a 100 KB name is not echoed whole. */
export const MAX_QUOTED = 100;

export const clip = (text: string) => (text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text);

/** Names for a message: `a`, `b` and `c`; `(none)` for an empty list. */
export function listNames(names: readonly string[]): string {
  const quoted = names.map((name) => `\`${clip(name)}\``);
  if (quoted.length === 0) return '(none)';
  return quoted.length === 1 ? quoted[0] : `${quoted.slice(0, -1).join(', ')} and ${quoted[quoted.length - 1]}`;
}

/** The name of `names` that `name` was most likely meant to be (a typo: a third of its letters off at most), or null. */
export function closestName(name: string, names: readonly string[]): string | null {
  if (names.length === 0) return null;
  const near = closest(name, [...names]);
  return distance(name, near) <= Math.max(1, Math.floor(name.length / 3)) ? near : null;
}
