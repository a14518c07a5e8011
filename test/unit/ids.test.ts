import { newId } from '../../src/lib/ids';

describe('newId', () => {
  it('is the prefix, ten time characters and sixteen random ones', () => {
    expect(newId('job')).toMatch(/^job_[0-9a-hjkmnp-tv-z]{26}$/);
  });

  it('sorts by creation time', () => {
    const ids = [1_700_000_000_000, 1_700_000_000_001, 1_800_000_000_000].map((t) => newId('run', t));
    expect([...ids].sort()).toEqual(ids);
  });

  it('sorts by creation within one millisecond too', () => {
    const ids = Array.from({ length: 1000 }, () => newId('run', 1_900_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(1000);
  });

  it('does not repeat', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newId('x', 0)));
    expect(ids.size).toBe(1000);
  });
});
