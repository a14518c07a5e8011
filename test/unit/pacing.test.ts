// Pacing of background work: back to back unless the foreground is busy and the loop saturated; then each
// step is followed by a pause that keeps the work to its share.
import { performance } from 'node:perf_hooks';
import { createPacing } from '../../src/lib/pacing';

const work = (ms: number) => async () => {
  await new Promise((resolve) => setTimeout(resolve, ms));
  return 'done';
};

async function timed(step: () => Promise<unknown>) {
  const started = performance.now();
  expect(await step()).toBe('done');
  return performance.now() - started;
}

describe('createPacing', () => {
  it('pauses after a step while the foreground is busy and the loop saturated, keeping the work to its share', async () => {
    const pacing = createPacing({ share: 0.2, foregroundBusy: () => true, saturated: () => true });
    // A 20 ms step at a fifth of the loop is followed by at least 80 ms of pause.
    expect(await timed(() => pacing.step(work(20)))).toBeGreaterThanOrEqual(95);
  });

  it.each([
    ['the foreground is idle', false, true],
    ['the loop has room', true, false],
  ])('runs steps back to back when %s', async (_when, busy, saturated) => {
    const pacing = createPacing({ share: 0.01, foregroundBusy: () => busy, saturated: () => saturated });
    // Paced, 20 ms at a hundredth of the loop would pause about 2 s.
    expect(await timed(() => pacing.step(work(20)))).toBeLessThan(1_000);
  });
});
