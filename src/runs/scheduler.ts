// Schedule triggers: every tick, each enabled schedule trigger's slots since it was last looked at are
// claimed in the database (one row per slot, so one instance wins each), the newest one fires if it is
// recent, and older ones, missed while no instance ran, are recorded as skipped rather than run in a burst.
import { Cron } from 'croner';
import type { Prisma } from '../../generated/prisma/sqlite/client';
import { isUniqueViolation } from '../db/errors';
import type { TenantDb } from '../db/tenant-scope';
import type { RenderedJob } from '../jobs/jobs-service';
import { InvalidTemplate } from '../jobs/jobs-service';
import type { Logger } from '../lib/logger';
import type { RunsService } from './runs-service';

export interface ScheduledTrigger {
  tenantId: string;
  id: string;
  config: unknown;
  job: RenderedJob & { slug: string };
}

interface ScheduleConfig {
  cron: string;
  timezone?: string;
  data?: Record<string, unknown>;
}

export const TICK_MS = 10_000;
/** A slot this late still fires (a tick, a busy loop); an older one was missed and is skipped. */
export const GRACE_MS = 60_000;
/** Most slots looked at per trigger and tick; a longer outage records only the newest ones. */
const MAX_SLOTS = 100;

export interface SchedulerDeps {
  /** Every enabled schedule trigger of a live, enabled job, across tenants. */
  scheduleTriggers(): Promise<ScheduledTrigger[]>;
  tenantDb: (tenantId: string) => TenantDb;
  runs: Pick<RunsService, 'startTriggered'>;
  logger: Logger;
  now: () => Date;
}

/** The slots in (after, until], oldest first: at most the newest MAX_SLOTS. */
function slotsBetween(config: ScheduleConfig, after: Date, until: Date): Date[] {
  const cron = new Cron(config.cron, { timezone: config.timezone ?? 'UTC', paused: true });
  // Found backwards from `until`: after a long outage, walking forward through every missed slot of a
  // minutely schedule would hold the event loop for seconds.
  return cron
    .previousRuns(MAX_SLOTS, new Date(until.getTime() + 1))
    .filter((slot) => slot > after)
    .reverse();
}

export function createScheduler({ scheduleTriggers, tenantDb, runs, logger, now }: SchedulerDeps) {
  async function claim(db: TenantDb, trigger: ScheduledTrigger, slot: Date, state: 'fired' | 'skipped'): Promise<boolean> {
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
  async function tickTrigger(trigger: ScheduledTrigger, at: Date, counts: { fired: number; skipped: number }) {
    const config = trigger.config as ScheduleConfig;
    const db = tenantDb(trigger.tenantId);
    const where = { jobId: trigger.job.id, triggerId: trigger.id };
    const last = await db.scheduleSlot.findFirst({ where, orderBy: { slot: 'desc' }, select: { slot: true } });
    // Slots before the trigger was saved (or enabled) were never due.
    const after = new Date(Math.max(last?.slot.getTime() ?? 0, trigger.job.updatedAt.getTime()));
    const slots = slotsBetween(config, after, at);
    for (const slot of slots) {
      const due = slot === slots[slots.length - 1] && at.getTime() - slot.getTime() <= GRACE_MS;
      if (!(await claim(db, trigger, slot, due ? 'fired' : 'skipped'))) continue;
      if (!due) {
        counts.skipped++;
        continue;
      }
      const context = { data: config.data ?? {}, schedule: { slot: slot.toISOString(), cron: config.cron, timezone: config.timezone ?? 'UTC' } };
      try {
        const started = await runs.startTriggered(db, trigger.job, { type: 'schedule', id: trigger.id }, slot.toISOString(), context);
        if (started.flowControl) logger.info({ triggerId: trigger.id, slot, ...started.flowControl }, 'flow control started no run for a schedule slot');
        await db.scheduleSlot.updateMany({ where: { ...where, slot }, data: { runId: started.runId } });
        counts.fired++;
      } catch (err) {
        if (err instanceof InvalidTemplate) {
          logger.warn({ triggerId: trigger.id, slot, error: err.message }, 'a scheduled run could not be started');
          continue;
        }
        // Not started (the database failed): the claim is given back, so that a tick within the grace
        // period tries the slot again (a run it did start is found again by its start key, not doubled).
        await db.scheduleSlot.deleteMany({ where: { ...where, slot, runId: null } }).catch(() => undefined);
        throw err;
      }
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
