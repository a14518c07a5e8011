// Group writes: the items of the calls made in one turn of the event loop are written by one call of
// `write` (one statement for many rows), per key. When that write fails, every caller of the batch gets
// the error and decides alone what to do (e.g. write its item by itself).
export function batchedBy<T>(keyOf: (item: T) => string, write: (key: string, items: T[]) => Promise<void>, { max = 100 } = {}): (item: T) => Promise<void> {
  const open = new Map<string, { items: T[]; settle: { resolve: () => void; reject: (err: unknown) => void }[] }>();

  function flush(key: string) {
    const batch = open.get(key);
    if (!batch) return;
    open.delete(key);
    // Through a promise even when `write` throws at once, so that every caller settles.
    Promise.resolve()
      .then(() => write(key, batch.items))
      .then(
        () => batch.settle.forEach(({ resolve }) => resolve()),
        (err: unknown) => batch.settle.forEach(({ reject }) => reject(err)),
      );
  }

  return (item) =>
    new Promise<void>((resolve, reject) => {
      const key = keyOf(item);
      let batch = open.get(key);
      if (!batch) {
        batch = { items: [], settle: [] };
        open.set(key, batch);
        setImmediate(() => flush(key));
      }
      batch.items.push(item);
      batch.settle.push({ resolve, reject });
      if (batch.items.length >= max) flush(key);
    });
}
