// Evaluation saves a delivery's decisions while it evaluates the next one, so that the save and the next
// runs' insert can share a commit; a save that fails leaves its delivery waiting for another pass.
import pino from 'pino';
import type { TenantDb } from '../../src/db/tenant-scope';
import { createInProcessQueue, type WorkMessage } from '../../src/lib/work-queue';
import { prepareConditions } from '../../src/triggers/conditions-fns';
import { indexTriggers } from '../../src/triggers/trigger-index-fns';
import type { LiveTriggers, TriggerJob } from '../../src/triggers/trigger-starts';
import { createDeliveryEvaluation, type PendingDelivery } from '../../src/triggers/webhook-evaluation';
import { until } from '../support/until';

const job: TriggerJob = { id: 'job_1', updatedAt: new Date(0) };
const live: LiveTriggers<TriggerJob> = {
  webhookIndex: () => indexTriggers([{ id: 'trg_1', job, events: ['issues.labeled'], conditions: prepareConditions(undefined) }]),
  watching: () => [],
};
const delivery = (id: string): PendingDelivery => ({ tenantId: 'ten_1', id, sourceId: 'src_1', event: 'issues', action: 'labeled', context: { payload: {} } });

function evaluation(deliveries: PendingDelivery[], record: (deliveryId: string) => Promise<void>) {
  const lines: string[] = [];
  const logger = pino({ level: 'error' }, { write: (line: string) => void lines.push(line) });
  const queue = createInProcessQueue(logger);
  const enqueued: WorkMessage[] = [];
  const enqueue = queue.enqueue.bind(queue);
  queue.enqueue = (message) => (enqueued.push(message), enqueue(message));
  const started: string[] = [];
  const { soon } = createDeliveryEvaluation({
    queue,
    live: async () => live,
    tenantDb: () => ({}) as TenantDb,
    // A pass reads them once: then they are behind its cursor.
    pendingDeliveries: async (after) => (after === undefined ? deliveries : []),
    start: async (_db, _job, _trigger, cause) => (started.push(cause), { runId: `run_${cause}` }),
    record: (_db, deliveryId) => record(deliveryId),
    intakeBusy: () => false,
    logger,
    now: () => new Date(),
  });
  return { soon, queue, started, enqueued, lines };
}

describe('webhook evaluation', () => {
  test('the next delivery starts its runs while the decisions of the one before are being saved', async () => {
    let save!: () => void;
    const firstSaved = new Promise<void>((resolve) => (save = resolve));
    const saved: string[] = [];
    const { soon, queue, started } = evaluation([delivery('act_1'), delivery('act_2')], (id) => (id === 'act_1' ? firstSaved : Promise.resolve()).then(() => void saved.push(id)));
    soon();
    // The first save is held until `save()`: the second delivery can only be started and saved meanwhile.
    await until('the second delivery saved', async () => saved.length > 0);
    expect(started).toEqual(['act_1', 'act_2']);
    expect(saved).toEqual(['act_2']);
    save();
    await queue.stop();
    expect(saved).toEqual(['act_2', 'act_1']);
  });

  test('a delivery whose decisions could not be saved is logged and taken up again by a later pass', async () => {
    const { soon, queue, started, enqueued, lines } = evaluation([delivery('act_1'), delivery('act_2')], (id) => (id === 'act_1' ? Promise.reject(new Error('database is locked')) : Promise.resolve()));
    soon();
    await until('the failed save retried later', async () => enqueued.some((message) => message.delayMs));
    await queue.stop();
    expect(started).toEqual(['act_1', 'act_2']);
    expect(lines.map((line) => JSON.parse(line))).toEqual([expect.objectContaining({ activityId: 'act_1', msg: 'a webhook delivery could not be evaluated; it stays waiting' })]);
    expect(enqueued.filter((message) => message.delayMs)).toEqual([expect.objectContaining({ kind: 'webhook-evaluation', delayMs: 30_000 })]);
  });
});
