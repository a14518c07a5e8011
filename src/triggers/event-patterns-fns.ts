// A webhook trigger's `events`: names such as `issues.labeled`, or patterns with `*` (`issues.*`, `*`).
// Matched by a glob walk, never a regular expression: a delivery's event name is the sender's text, and
// a pattern is the tenant's, so a backtracking engine would let the two together hold the process.
import { globMatches } from '../lib/glob';

/**
 * What a pattern may hold when it is saved. Matching is linear in the name whatever the pattern, so these
 * only keep the work per delivery small (at most name length × pattern length steps); patterns saved
 * before the bounds still match, as safely.
 */
export const EVENT_PATTERN_LIMITS = { wildcards: 8, length: 200 } as const;

/** `issues.labeled`, or `push` for a delivery without an action: what `events` patterns match. */
export const eventName = (event: string, action: string | null) => (action ? `${event}.${action}` : event);

/** Why `pattern` cannot be saved (too long, too many `*`), or null. */
export function eventPatternProblem(pattern: string): string | null {
  if (pattern.length > EVENT_PATTERN_LIMITS.length) return `is ${pattern.length} characters long; at most ${EVENT_PATTERN_LIMITS.length}`;
  const wildcards = pattern.split('*').length - 1;
  if (wildcards > EVENT_PATTERN_LIMITS.wildcards) return `has ${wildcards} wildcards (\`*\`); at most ${EVENT_PATTERN_LIMITS.wildcards}`;
  return null;
}

/** Whether one of the patterns (`*` matches any run of characters) matches the whole name. */
export function matchesEvents(patterns: string[], name: string): boolean {
  return patterns.some((pattern) => (pattern.includes('*') ? globMatches(pattern, name) : pattern === name));
}
