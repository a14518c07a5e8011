// Values kept for a while: read once within their time, forgotten on demand, never kept when missing.
import { keptFor } from '../../src/lib/kept';

describe('keptFor', () => {
  it('loads a key once within its time, again after it or after forget', async () => {
    let clock = 0;
    let loads = 0;
    const kept = keptFor<number>(1_000, { clock: () => clock });
    const load = async () => ++loads;
    expect(await kept.get('a', load)).toBe(1);
    clock = 999;
    expect(await kept.get('a', load)).toBe(1);
    clock = 1_000;
    expect(await kept.get('a', load)).toBe(2);
    kept.forget('a');
    expect(await kept.get('a', load)).toBe(3);
    expect(await kept.get('b', load)).toBe(4);
  });

  it('does not keep nothing: a row that appears is seen at once', async () => {
    const kept = keptFor<string | null>(60_000);
    expect(await kept.get('a', async () => null)).toBeNull();
    expect(await kept.get('a', async () => 'found')).toBe('found');
  });

  it('starts over when full', async () => {
    let loads = 0;
    const kept = keptFor<number>(60_000, { max: 2 });
    const load = async () => ++loads;
    await kept.get('a', load);
    await kept.get('b', load);
    await kept.get('c', load); // full: a and b are dropped
    expect(await kept.get('c', load)).toBe(3);
    expect(await kept.get('a', load)).toBe(4);
  });
});
