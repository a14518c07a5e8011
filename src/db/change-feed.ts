// Changes other instances must hear of (a tenant's jobs changed: drop what is kept of them), carried by
// PostgreSQL's LISTEN/NOTIFY on one connection of this process. While that connection is down, nothing is
// heard: everything kept is dropped on every reconnection, and the connection is tried again.
import { Client } from 'pg';
import type { Logger } from '../lib/logger';

const CHANNEL = 'flows_jobs_changed';
const RECONNECT_MS = 1_000;

export interface ChangeFeed {
  /** Tells every instance (this one too) that the tenant's jobs changed. */
  announce(tenantId: string): Promise<void>;
  close(): Promise<void>;
}

export function listenForChanges(url: string, logger: Logger, { heard, missed }: { heard(tenantId: string): void; missed(): void }): ChangeFeed {
  let client: Client | null = null;
  let closed = false;
  const retry = () => setTimeout(() => void connect().catch(() => {}), RECONNECT_MS).unref();
  const connect = async () => {
    if (closed) return;
    const next = new Client({ connectionString: url });
    next.on('notification', (message) => message.payload && heard(message.payload));
    next.on('error', (err) => {
      if (closed) return;
      logger.warn({ err }, 'the connection that hears changes from other instances failed; reconnecting');
      client = null;
      void next.end().catch(() => {});
      retry();
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${CHANNEL}`);
      if (closed) return void next.end().catch(() => {});
      client = next;
      missed();
    } catch (err) {
      logger.warn({ err }, 'cannot listen for changes from other instances; retrying');
      void next.end().catch(() => {});
      retry();
    }
  };
  void connect().catch(() => {});
  return {
    async announce(tenantId) {
      await client?.query('SELECT pg_notify($1, $2)', [CHANNEL, tenantId]);
    },
    async close() {
      closed = true;
      await client?.end().catch(() => {});
    },
  };
}
