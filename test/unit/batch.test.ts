// Group writes: the calls of one turn of the event loop reach the writer together, per key; a failed write
// fails each of its callers; a full batch is written at once.
import { batchedBy } from '../../src/lib/batch';

describe('batchedBy', () => {
  it('writes the items of one turn together, per key, and the next turn apart', async () => {
    const writes: [string, number[]][] = [];
    const record = batchedBy<{ key: string; n: number }>(
      (item) => item.key,
      async (key, items) => {
        writes.push([key, items.map((item) => item.n)]);
      },
    );
    await Promise.all([record({ key: 'a', n: 1 }), record({ key: 'b', n: 2 }), record({ key: 'a', n: 3 })]);
    await record({ key: 'a', n: 4 });
    expect(writes).toEqual([
      ['a', [1, 3]],
      ['b', [2]],
      ['a', [4]],
    ]);
  });

  it('gives the error of a failed write to every caller of its batch, and only to them', async () => {
    const record = batchedBy<number>(
      () => 'k',
      async (_key, items) => {
        if (items.includes(13)) throw new Error('unlucky batch');
      },
    );
    const outcomes = await Promise.allSettled([record(1), record(13), record(2)]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected']);
    await expect(record(3)).resolves.toBeUndefined();
  });

  it('settles every caller when the writer throws before returning a promise', async () => {
    const record = batchedBy<number>(
      () => 'k',
      () => {
        throw new Error('thrown at once');
      },
      { max: 2 },
    );
    const outcomes = await Promise.allSettled([record(1), record(2), record(3)]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected']);
  });

  it('writes a full batch at once', async () => {
    const sizes: number[] = [];
    const record = batchedBy<number>(
      () => 'k',
      async (_key, items) => {
        sizes.push(items.length);
      },
      { max: 2 },
    );
    await Promise.all([1, 2, 3, 4, 5].map(record));
    expect(sizes).toEqual([2, 2, 1]);
  });
});
