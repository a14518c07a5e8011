// Paths into a context: dotted names with `[n]` for an index and `[*]` for every element, such as
// `payload.issue.labels[*].name`. Parsed once when conditions are compiled.

export type Step = { key: string } | { index: number } | { each: true };

export interface ParsedPath {
  steps: Step[];
  /** Whether the path has `[*]`: it then selects any number of values. */
  many: boolean;
}

// Linear on any text: the name class excludes `[`, so the name and the brackets never compete for a
// character (and a path is at most 500 characters, conditions-fns.ts).
const SEGMENT = /^([^.[\]\s]+)((?:\[(?:\d+|\*)\])*)$/;

/** The steps of `path`, or null when it is not a well-formed path. */
export function parsePath(path: string): ParsedPath | null {
  const steps: Step[] = [];
  for (const segment of path.split('.')) {
    const match = SEGMENT.exec(segment);
    if (!match) return null;
    steps.push({ key: match[1] });
    for (const [, inner] of match[2].matchAll(/\[(\d+|\*)\]/g)) steps.push(inner === '*' ? { each: true } : { index: Number(inner) });
  }
  return { steps, many: steps.some((step) => 'each' in step) };
}

const own = (value: object, key: string) => Object.prototype.hasOwnProperty.call(value, key);

/** The values `path` selects in `context`: none when it leads nowhere, one or more with `[*]`. */
export function select(context: unknown, { steps }: ParsedPath): unknown[] {
  let current: unknown[] = [context];
  for (const step of steps) {
    const next: unknown[] = [];
    for (const value of current) {
      if ('key' in step) {
        if (value !== null && typeof value === 'object' && !Array.isArray(value) && own(value, step.key)) next.push((value as Record<string, unknown>)[step.key]);
      } else if (Array.isArray(value)) {
        if ('each' in step) next.push(...value);
        else if (step.index < value.length) next.push(value[step.index]);
      }
    }
    current = next;
  }
  return current;
}
