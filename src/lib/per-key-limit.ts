// At most `inFlight` tasks of one key (a tenant) at a time, the others waiting their turn in arrival
// order; when `waiting` already wait, a further task is refused instead of queued, unless its caller asked
// to wait whatever the line (background work, whose own queue bounds how much of it there is).

export interface PerKeyLimit {
  run<T>(key: string, task: () => Promise<T>, options?: { waitWhateverTheLine?: boolean }): Promise<T>;
  /** How many tasks of `key` run and wait (tests, logs). */
  load(key: string): { running: number; waiting: number };
}

export function perKeyLimit({ inFlight, waiting, refuse }: { inFlight: number; waiting: number; refuse: () => Error }): PerKeyLimit {
  const lines = new Map<string, { running: number; queue: (() => void)[] }>();

  const leave = (key: string) => {
    const line = lines.get(key)!;
    const next = line.queue.shift();
    if (next) return next(); // the slot passes to the next in line
    line.running -= 1;
    if (line.running === 0) lines.delete(key);
  };

  return {
    async run(key, task, { waitWhateverTheLine = false } = {}) {
      let line = lines.get(key);
      if (!line) lines.set(key, (line = { running: 0, queue: [] }));
      if (line.running < inFlight) line.running += 1;
      else if (line.queue.length >= waiting && !waitWhateverTheLine) throw refuse();
      else await new Promise<void>((resolve) => line.queue.push(resolve));
      try {
        return await task();
      } finally {
        leave(key);
      }
    },
    load(key) {
      const line = lines.get(key);
      return { running: line?.running ?? 0, waiting: line?.queue.length ?? 0 };
    },
  };
}
