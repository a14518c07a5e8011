// A webhook trigger's `events`: names such as `issues.labeled`, or patterns with `*` (`issues.*`, `*`).

/** `issues.labeled`, or `push` for a delivery without an action: what `events` patterns match. */
export const eventName = (event: string, action: string | null) => (action ? `${event}.${action}` : event);

const GLOBS_KEPT = 1000;
const globs = new Map<string, RegExp>();

/** The regular expression of a pattern with `*`, made once (the oldest is let go when many are kept). */
function globOf(pattern: string): RegExp {
  let glob = globs.get(pattern);
  if (!glob) {
    glob = new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
    if (globs.size >= GLOBS_KEPT) globs.delete(globs.keys().next().value!);
    globs.set(pattern, glob);
  }
  return glob;
}

/** Whether one of the patterns (`*` matches any run of characters) matches the whole name. */
export function matchesEvents(patterns: string[], name: string): boolean {
  return patterns.some((pattern) => (pattern.includes('*') ? globOf(pattern).test(name) : pattern === name));
}
