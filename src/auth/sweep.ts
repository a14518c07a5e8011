// Deletes what has expired for good: authorization-server records past their grace period, ended
// sessions and rate-limit counters of past windows. Run hourly by the process; the tables only grow otherwise.
import { EXPIRED_GRACE_MS } from './lifetimes';
import type { Db } from '../db/client';

export const SWEEP_INTERVAL_MS = 60 * 60 * 1000;

export async function sweepExpired(db: Db, now = new Date()): Promise<{ records: number; sessions: number; counters: number }> {
  const records = await db.oidcPayload.deleteMany({ where: { expiresAt: { lt: new Date(now.getTime() - EXPIRED_GRACE_MS) } } });
  const sessions = await db.session.deleteMany({ where: { expiresAt: { lt: now } } });
  const counters = await db.rateLimit.deleteMany({ where: { expire: { lt: now } } });
  return { records: records.count, sessions: sessions.count, counters: counters.count };
}
