// The per-key limit the render pool is built on, with a line of bounded length.
import { perKeyLimit } from '../../src/lib/per-key-limit';

describe('perKeyLimit', () => {
  const gate = () => {
    let release!: () => void;
    return { done: new Promise<void>((resolve) => (release = resolve)), release: () => release() };
  };

  it('runs at most inFlight per key, the others in arrival order, and refuses beyond the line', async () => {
    const limit = perKeyLimit({ inFlight: 2, waiting: 1, refuse: () => new Error('refused') });
    const order: string[] = [];
    const gates = [gate(), gate(), gate()];
    const runs = gates.map((g, i) => limit.run('t1', async () => (order.push(`start ${i}`), await g.done, i)));
    expect(limit.load('t1')).toEqual({ running: 2, waiting: 1 });
    await expect(limit.run('t1', async () => 'late')).rejects.toThrow('refused');
    const background = limit.run('t1', async () => (order.push('background'), 'b'), { waitWhateverTheLine: true });
    expect(await limit.run('t2', async () => 'other key')).toBe('other key');
    gates[1].release();
    expect(await runs[1]).toBe(1);
    gates[0].release();
    gates[2].release();
    expect(await Promise.all([runs[0], runs[2], background])).toEqual([0, 2, 'b']);
    expect(order).toEqual(['start 0', 'start 1', 'start 2', 'background']);
    expect(limit.load('t1')).toEqual({ running: 0, waiting: 0 });
  });

  it('frees the slot when a task fails', async () => {
    const limit = perKeyLimit({ inFlight: 1, waiting: 0, refuse: () => new Error('refused') });
    await expect(limit.run('t', async () => { throw new Error('boom'); })).rejects.toThrow('boom');
    expect(await limit.run('t', async () => 'next')).toBe('next');
  });
});
