// What an operator scrapes at /metrics (Prometheus text, prom-client). Two kinds of figures:
// - this instance's counters and histograms, observed where the work happens (deliveries taken or refused,
//   runs queued, started and finished, what runs cost, event-delivery attempts), which add up across
//   instances (sum them);
// - the deployment's gauges, read from the database at each scrape (runs by state, the queue, the
//   evaluation lag, pending event deliveries, the database itself), the same on every instance (take max).
// Labels are bounded sets (states, reasons, agent kinds): never a tenant, a job or a run.
import type { Gauge, Registry } from 'prom-client';
import type { Executed } from '../runs/runner';
import { idTime } from '../lib/ids';

/** What the database says of the whole deployment now; read once per scrape. */
export interface DeploymentFigures {
  /** Runs in each state that is not final (queued, starting, running, canceling). */
  runsByState: Record<string, number>;
  queuedRuns: number;
  /** Seconds the oldest queued run has waited since its creation; 0 with none. */
  oldestQueuedSeconds: number;
  /** Seconds the oldest delivery not yet evaluated has waited; 0 with none. */
  evaluationLagSeconds: number;
  pendingEventDeliveries: number;
  /** Seconds a trivial statement took. */
  databaseSeconds: number;
}

export interface Metrics {
  /** What a scrape reads; null when metrics are served nowhere (nothing is counted then). */
  registry: Registry | null;
  deliveryAccepted(): void;
  deliveryRefused(reason: string): void;
  /** A run event as events name them (`queued`, `started`, a final state). */
  runEvent(event: string): void;
  executed(run: Executed): void;
  eventAttempt(outcome: 'delivered' | 'failed'): void;
}

const FINAL = ['succeeded', 'failed', 'canceled', 'timed_out', 'expired'];
/** Runs last from seconds to hours; starting takes milliseconds to the length of a queue. */
const DURATION_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200];
const START_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800];
/** How long one reading of the database serves the gauges a scrape reads together. */
const FIGURES_KEPT_MS = 1_000;

/** prom-client, loaded only where metrics are served. */
const client = () => require('prom-client') as typeof import('prom-client');

let processRegistry: Registry | undefined;
/** The process's own figures (CPU, memory, event loop, GC): one set of collectors a process, however many apps it holds. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new (client().Registry)();
    client().collectDefaultMetrics({ register: processRegistry, prefix: 'flows_' });
  }
  return processRegistry;
}

/** Metrics for a server that serves none: nothing counted, nothing loaded. */
export const NO_METRICS: Metrics = { registry: null, deliveryAccepted() {}, deliveryRefused() {}, runEvent() {}, executed() {}, eventAttempt() {} };

export function createMetrics({ figures }: { figures: () => Promise<DeploymentFigures> }): Metrics {
  const { Counter, Gauge, Histogram, Registry } = client();
  const own = new Registry();

  let reading: { at: number; figures: Promise<DeploymentFigures> } | null = null;
  const current = () => {
    if (!reading || Date.now() - reading.at > FIGURES_KEPT_MS) {
      reading = { at: Date.now(), figures: figures() };
      reading.figures.catch(() => (reading = null));
    }
    return reading.figures;
  };
  /** A gauge of the deployment, set from the figures at each scrape. */
  const deployment = (name: string, help: string, set: (gauge: Gauge, figures: DeploymentFigures) => void, labelNames: string[] = []) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [own],
      async collect() {
        set(this, await current());
      },
    });

  new Gauge({
    name: 'flows_database_up',
    help: 'Whether the database answered the last scrape (1) or not (0).',
    registers: [own],
    async collect() {
      this.set(await current().then(() => 1, () => 0));
    },
  });
  deployment('flows_database_query_seconds', 'How long a trivial statement took at the last scrape.', (gauge, f) => gauge.set(f.databaseSeconds));
  deployment('flows_runs', 'Runs of the deployment in each state that is not final.', (gauge, f) => {
    gauge.reset();
    for (const [state, count] of Object.entries(f.runsByState)) gauge.set({ state }, count);
  }, ['state']);
  deployment('flows_run_queue_depth', 'Runs of the deployment waiting in their queues.', (gauge, f) => gauge.set(f.queuedRuns));
  deployment('flows_run_queue_oldest_age_seconds', 'How long the oldest queued run has waited since its creation.', (gauge, f) => gauge.set(f.oldestQueuedSeconds));
  deployment('flows_webhook_evaluation_lag_seconds', 'How long the oldest delivery not yet evaluated against its triggers has waited.', (gauge, f) => gauge.set(f.evaluationLagSeconds));
  deployment('flows_event_deliveries_pending', 'Outbound event deliveries of the deployment not yet delivered or given up.', (gauge, f) => gauge.set(f.pendingEventDeliveries));

  const accepted = new Counter({ name: 'flows_webhook_deliveries_accepted_total', help: 'Webhook deliveries this instance took.', registers: [own] });
  const refused = new Counter({ name: 'flows_webhook_deliveries_refused_total', help: 'Webhook deliveries this instance refused, by reason.', labelNames: ['reason'], registers: [own] });
  const queued = new Counter({ name: 'flows_runs_queued_total', help: 'Runs this instance created.', registers: [own] });
  const started = new Counter({ name: 'flows_runs_started_total', help: 'Runs this instance started.', registers: [own] });
  const finished = new Counter({ name: 'flows_runs_finished_total', help: 'Runs this instance ended, by their final state.', labelNames: ['state'], registers: [own] });
  const duration = new Histogram({ name: 'flows_run_duration_seconds', help: 'How long the agent of a run ran on this instance, by how it ended.', labelNames: ['outcome'], buckets: DURATION_BUCKETS, registers: [own] });
  const timeToStart = new Histogram({ name: 'flows_run_time_to_start_seconds', help: 'From a run\'s creation to its agent running (first attempts).', buckets: START_BUCKETS, registers: [own] });
  const tokens = new Counter({ name: 'flows_agent_tokens_total', help: 'Tokens the agents of runs on this instance spent, by agent and kind of token.', labelNames: ['agent', 'kind'], registers: [own] });
  const cost = new Counter({ name: 'flows_agent_cost_usd_total', help: 'What the agents of runs on this instance cost, where known, in US dollars.', labelNames: ['agent'], registers: [own] });
  const unknownCost = new Counter({ name: 'flows_agent_unknown_cost_runs_total', help: 'Runs on this instance whose agent spent tokens at a cost not known.', labelNames: ['agent'], registers: [own] });
  const attempts = new Counter({ name: 'flows_event_delivery_attempts_total', help: 'Attempts this instance made to deliver outbound events, by outcome.', labelNames: ['outcome'], registers: [own] });
  for (const state of FINAL) finished.inc({ state }, 0);
  for (const outcome of ['delivered', 'failed']) attempts.inc({ outcome }, 0);

  return {
    registry: Registry.merge([processMetrics(), own]),
    deliveryAccepted: () => accepted.inc(),
    deliveryRefused: (reason) => refused.inc({ reason }),
    runEvent(event) {
      if (event === 'queued') queued.inc();
      else if (event === 'started') started.inc();
      else if (FINAL.includes(event)) finished.inc({ state: event });
    },
    executed({ runId, attempt, runningAt, endedAt, outcome, agent, usage }) {
      if (runningAt) {
        duration.observe({ outcome }, (endedAt.getTime() - runningAt.getTime()) / 1000);
        const created = idTime(runId);
        if (attempt === 1 && created !== null) timeToStart.observe(Math.max(0, runningAt.getTime() - created) / 1000);
      }
      if (!agent || !usage) return;
      tokens.inc({ agent, kind: 'input' }, usage.inputTokens);
      tokens.inc({ agent, kind: 'output' }, usage.outputTokens);
      tokens.inc({ agent, kind: 'cached' }, usage.cachedTokens);
      if (usage.costUsd === null) unknownCost.inc({ agent });
      else cost.inc({ agent }, usage.costUsd);
    },
    eventAttempt: (outcome) => attempts.inc({ outcome }),
  };
}
