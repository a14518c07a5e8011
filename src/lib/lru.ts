// A bounded least-recently-used map (lru-cache), for what is costly to make and cheap to keep a while
// (parsed templates, compiled patterns). Unlike kept.ts (rows read from the database, kept for a time),
// nothing here goes stale: entries leave only when the bound needs the room. Bounded by count and by a
// weight of each key (its characters); a value over the whole weight is made each time, never kept.
import { LRUCache } from 'lru-cache';

export interface Lru<V> {
  /** The value for `key`, made by `make` when absent (a `make` that throws keeps nothing). */
  get(key: string, make: () => V): V;
  readonly size: number;
}

export function lruFor<V extends {}>({ max, maxWeight, weigh }: { max: number; maxWeight: number; weigh: (key: string) => number }): Lru<V> {
  const cache = new LRUCache<string, V>({ max, maxSize: maxWeight, sizeCalculation: (_value, key) => Math.max(1, weigh(key)) });
  return {
    get(key, make) {
      const kept = cache.get(key);
      if (kept !== undefined) return kept;
      const value = make();
      cache.set(key, value);
      return value;
    },
    get size() {
      return cache.size;
    },
  };
}
