// Changes other instances must hear of, carried by PostgreSQL's LISTEN/NOTIFY on one connection of this
// process: a tenant's jobs changed (drop what is kept of them), a run was stopped (end its execution, if it
// is here). While that connection is down, nothing is heard: `missed` is called on every reconnection, and
// the connection is tried again.
import type { Client } from 'pg';
import type { Logger } from '../lib/logger';

const CHANNEL = 'flows_jobs_changed';
const STOPS = 'flows_run_stopped';
const RECONNECT_MS = 1_000;

export interface ChangeFeed {
  /** Tells every instance (this one too) that the tenant's jobs changed. */
  announce(tenantId: string): Promise<void>;
  /** Tells every instance that the run was stopped, for the one executing it. */
  announceStop(runId: string): Promise<void>;
  close(): Promise<void>;
}

export interface ChangeListener {
  heard(tenantId: string): void;
  stopped(runId: string): void;
  missed(): void;
}

export function listenForChanges(url: string, logger: Logger, { heard, stopped, missed }: ChangeListener): ChangeFeed {
  let client: Client | null = null;
  let closed = false;
  const retry = () => setTimeout(() => void connect().catch(() => {}), RECONNECT_MS).unref();
  const connect = async () => {
    if (closed) return;
    // Loaded here, on PostgreSQL only: the embedded database never pays for it at start.
    const next: Client = new (require('pg') as typeof import('pg')).Client({ connectionString: url });
    next.on('notification', ({ channel, payload }) => {
      if (!payload) return;
      if (channel === STOPS) stopped(payload);
      else heard(payload);
    });
    next.on('error', (err) => {
      if (closed) return;
      logger.warn({ err }, 'the connection that hears changes from other instances failed; reconnecting');
      client = null;
      void next.end().catch(() => {});
      retry();
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${CHANNEL}; LISTEN ${STOPS}`);
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
    async announceStop(runId) {
      await client?.query('SELECT pg_notify($1, $2)', [STOPS, runId]);
    },
    async close() {
      closed = true;
      await client?.end().catch(() => {});
    },
  };
}
