// The catalog keeps a tenant's live jobs until one changes, and never keeps a read a change overtook.
import { createJobsCatalog } from '../../src/jobs/jobs-catalog';
import type { JobRow } from '../../src/jobs/jobs-repo';

const job = (id: string, slug: string, enabled = true) =>
  ({ id, slug, enabled, triggers: [{ id: 'trg', type: 'webhook', enabled: true, sourceId: 'src', watchedJobId: null, config: { events: ['push'] } }] }) as unknown as JobRow;

describe('jobs catalog', () => {
  it('reads a tenant once, until a change of it', async () => {
    const catalog = createJobsCatalog();
    let reads = 0;
    const load = async () => (reads++, [job('job_1', 'one')]);
    expect((await catalog.live('ten_a', load)).find('one')?.id).toBe('job_1');
    await catalog.live('ten_a', load);
    expect(reads).toBe(1);
    catalog.changed('ten_b');
    await catalog.live('ten_a', load);
    expect(reads).toBe(1);
    catalog.changed('ten_a');
    await catalog.live('ten_a', load);
    expect(reads).toBe(2);
  });

  it('does not keep a read that began before a change', async () => {
    const catalog = createJobsCatalog();
    let release!: () => void;
    const slow = () => new Promise<JobRow[]>((resolve) => (release = () => resolve([job('job_old', 'old')])));
    const pending = catalog.live('ten_a', slow);
    catalog.changed('ten_a');
    release();
    expect((await pending).find('old')).not.toBeNull(); // the caller that asked before the change gets it
    const fresh = await catalog.live('ten_a', async () => [job('job_new', 'new')]);
    expect([fresh.find('old'), fresh.find('new')?.id]).toEqual([null, 'job_new']);
  });

  it('lists the webhook triggers of enabled jobs only, and finds an id before another job\'s slug', async () => {
    const catalog = createJobsCatalog();
    const live = await catalog.live('ten_a', async () => [job('job_b', 'job_a'), job('job_a', 'x'), job('job_c', 'c', false)]);
    expect(live.find('job_a')?.id).toBe('job_a');
    expect(live.webhookCandidates('src').map((candidate) => candidate.job.id)).toEqual(['job_a', 'job_b']);
  });
});
