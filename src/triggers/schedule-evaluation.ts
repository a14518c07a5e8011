// Schedule triggers: every tick, each enabled schedule trigger's slots since it was last looked at are
// claimed in the database (one row per slot, so one instance wins each); the one that acts (the rule:
// acts-fns.ts) starts a run, and older ones, missed while no instance ran, are recorded as skipped.
import type { Prisma } from '../../generated/prisma/sqlite/client';
import { isUniqueViolation } from '../db/errors';
import type { TenantDb } from '../db/tenant-scope';
import type { Logger } from '../lib/logger';
import { scheduleContext, scheduleSlots, type ScheduleConfig } from './acts-fns';
import type { StartTriggered, TriggerJob } from './trigger-starts';

export interface ScheduledTrigger<J extends TriggerJob = TriggerJob> {
  tenantId: string;
  id: string;
  config: unknown;
  job: J;
}

export const TICK_MS = 10_000;

export interface SchedulerDeps<J extends TriggerJob> {
  /** Every enabled schedule trigger of a live, enabled job, across tenants. */
  scheduleTriggers(): Promise<ScheduledTrigger<J>[]>;
  tenantDb: (tenantId: string) => TenantDb;
  start: StartTriggered<J>;
  logger: Logger;
  now: () => Date;
}

export function createScheduler<J extends TriggerJob>({ scheduleTriggers, tenantDb, start, logger, now }: SchedulerDeps<J>) {
  async function claim(db: TenantDb, trigger: ScheduledTrigger<J>, slot: Date, state: 'fired' | 'skipped'): Promise<boolean> {
    try {
      // The tenant-bound client adds tenantId.
      await db.scheduleSlot.create({ data: { jobId: trigger.job.id, triggerId: trigger.id, slot, state } as Prisma.ScheduleSlotUncheckedCreateInput });
      return true;
    } catch (err) {
      if (isUniqueViolation(err)) return false; // another instance has it
      throw err;
    }
  }

  /** Claims the trigger's slots since it was last looked at: the newest fires when recent, older ones are skipped. */
  async function tickTrigger(trigger: ScheduledTrigger<J>, at: Date, counts: { fired: number; skipped: number }) {
    const config = trigger.config as ScheduleConfig;
    const db = tenantDb(trigger.tenantId);
    const where = { jobId: trigger.job.id, triggerId: trigger.id };
    const last = await db.scheduleSlot.findFirst({ where, orderBy: { slot: 'desc' }, select: { slot: true } });
    // Slots before the trigger was saved (or enabled) were never due.
    const after = new Date(Math.max(last?.slot.getTime() ?? 0, trigger.job.updatedAt.getTime()));
    for (const { slot, acts } of scheduleSlots(config, after, at)) {
      if (!(await claim(db, trigger, slot, acts ? 'fired' : 'skipped'))) continue;
      if (!acts) {
        counts.skipped++;
        continue;
      }
      let started;
      try {
        started = await start(db, trigger.job, { type: 'schedule', id: trigger.id }, slot.toISOString(), scheduleContext(config, slot));
      } catch (err) {
        // Not started (the database failed): the claim is given back, so that a tick within the grace
        // period tries the slot again (a run it did start is found again by its start key, not doubled).
        await db.scheduleSlot.deleteMany({ where: { ...where, slot, runId: null } }).catch(() => undefined);
        throw err;
      }
      if (started.invalidTemplate !== undefined) {
        logger.warn({ triggerId: trigger.id, slot, error: started.invalidTemplate }, 'a scheduled run could not be started');
        continue;
      }
      if (started.flowControl) logger.info({ triggerId: trigger.id, slot, ...started.flowControl }, 'flow control started no run for a schedule slot');
      await db.scheduleSlot.updateMany({ where: { ...where, slot }, data: { runId: started.runId } });
      counts.fired++;
    }
  }

  /** Looks at every schedule trigger once; repeated every TICK_MS through the work queue (main.ts). */
  async function tick(): Promise<{ fired: number; skipped: number }> {
    const at = now();
    const counts = { fired: 0, skipped: 0 };
    for (const trigger of await scheduleTriggers()) {
      // One trigger that fails does not hold up the others.
      await tickTrigger(trigger, at, counts).catch((err: unknown) => logger.error({ err, triggerId: trigger.id }, 'a schedule trigger could not be ticked; the next tick tries again'));
    }
    if (counts.skipped) logger.info(counts, 'schedule slots missed while no instance ran were skipped');
    return counts;
  }

  return { tick };
}

export type Scheduler = ReturnType<typeof createScheduler>;
