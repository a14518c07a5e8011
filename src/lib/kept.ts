// Values read from the database and kept for a short while, so that a hot path (every webhook delivery,
// every event) does not read the same rows each time. A change made by this instance forgets the entry
// at once; one made by another instance is seen after `ms` at most. Nothing found (null) is not kept, so
// that a row that appears is seen at once. Bounded: when full, it starts over.
export interface Kept<V> {
  get(key: string, load: () => Promise<V>): Promise<V>;
  forget(key: string): void;
}

export function keptFor<V>(ms: number, { max = 10_000, clock = Date.now }: { max?: number; clock?: () => number } = {}): Kept<V> {
  const entries = new Map<string, { at: number; value: V }>();
  return {
    async get(key, load) {
      const entry = entries.get(key);
      if (entry && clock() - entry.at < ms) return entry.value;
      const value = await load();
      if (value === null) return value;
      if (entries.size >= max) entries.clear();
      entries.set(key, { at: clock(), value });
      return value;
    },
    forget(key) {
      entries.delete(key);
    },
  };
}
