// Optional OpenTelemetry tracing of a webhook delivery → its triggers' decisions → the runs they started,
// exported over OTLP/HTTP; off unless an endpoint is configured (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
// OTEL_EXPORTER_OTLP_ENDPOINT, read as every OpenTelemetry SDK reads them). Each span is written once its
// part has ended, with the times that part recorded, and its ids derive from what it is (the delivery's
// activity id, a decision's trigger, a run's attempt): a run executed minutes later, on another instance,
// joins its delivery's trace without a context carried through the queue or the run row.
// Attributes are ids, names and counts: never a payload, a prompt or a result.
import { createHash, randomBytes } from 'node:crypto';
import type { Attributes, Context, Tracer } from '@opentelemetry/api';
import type { IdGenerator } from '@opentelemetry/sdk-trace';
import type { TenantDb } from '../db/tenant-scope';
import { idTime } from '../lib/ids';
import type { Logger } from '../lib/logger';
import { packageVersion } from '../lib/paths';
import { createRunsRepo } from '../runs/runs-repo';
import { runView } from '../runs/runs-fns';
import type { Executed } from '../runs/runner';
import type { Decision } from '../webhooks/webhooks-repo';
import type { PendingDelivery } from '../triggers/webhook-evaluation';

export interface Tracing {
  /** A delivery's triggers decided: its span, and one per decision recorded (the matches and the errors). */
  evaluated(delivery: PendingDelivery, decisions: Decision[], misses: number, at: Date): void;
  /** An attempt of a run ended. */
  executed(run: Executed): void;
  /** Exports what is still buffered. */
  shutdown(): Promise<void>;
}

export const NO_TRACING: Tracing = { evaluated() {}, executed() {}, shutdown: async () => {} };

const digest = (...parts: string[]) => createHash('sha256').update(parts.join('\0')).digest('hex');
/** The ids of a trace and of its spans, from what they are. */
export const traceIdOf = (root: string) => digest('flows trace', root).slice(0, 32);
export const spanIdOf = (...what: string[]) => digest('flows span', ...what).slice(0, 16);

/**
 * Ids as the span about to start should have them: the SDK asks its generator for a root's trace id and for
 * every span's id, synchronously inside `startSpan`, so they are handed over just before.
 */
class DerivedIds implements IdGenerator {
  next: { traceId: string; spanId: string } | null = null;
  generateTraceId() {
    return this.next?.traceId ?? randomBytes(16).toString('hex');
  }
  generateSpanId() {
    return this.next?.spanId ?? randomBytes(8).toString('hex');
  }
}

interface SpanAt {
  name: string;
  traceId: string;
  spanId: string;
  /** The span above it; none for a trace's first. */
  parentId: string | null;
  start: Date;
  end: Date;
  attributes: Attributes;
  failed?: string;
}

/** How long exporting what is buffered may hold a shutdown. */
const SHUTDOWN_MS = 3_000;

export function createTracing({ tenantDb, instanceId, logger }: { tenantDb: (tenantId: string) => TenantDb; instanceId: string; logger: Logger }): Tracing {
  // Loaded only where traces are exported.
  const api = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
  const { TracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace');
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');

  const ids = new DerivedIds();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME?.trim() || 'flows', 'service.version': packageVersion, 'service.instance.id': instanceId }),
    idGenerator: ids,
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })],
  });
  const tracer: Tracer = provider.getTracer('flows', packageVersion);

  function write(span: SpanAt) {
    const parent: Context = span.parentId
      ? api.trace.setSpanContext(api.ROOT_CONTEXT, { traceId: span.traceId, spanId: span.parentId, traceFlags: api.TraceFlags.SAMPLED, isRemote: true })
      : api.ROOT_CONTEXT;
    ids.next = { traceId: span.traceId, spanId: span.spanId };
    let started;
    try {
      started = tracer.startSpan(span.name, { startTime: span.start, attributes: span.attributes, root: !span.parentId }, parent);
    } finally {
      ids.next = null;
    }
    if (span.failed) started.setStatus({ code: api.SpanStatusCode.ERROR, message: span.failed });
    started.end(span.end);
  }

  return {
    evaluated(delivery, decisions, misses, at) {
      const traceId = traceIdOf(delivery.id);
      const deliverySpan = spanIdOf('delivery', delivery.id);
      const name = delivery.action ? `${delivery.event}.${delivery.action}` : delivery.event;
      write({
        name: `delivery ${name}`,
        traceId,
        spanId: deliverySpan,
        parentId: null,
        start: new Date(idTime(delivery.id) ?? at.getTime()),
        end: at,
        attributes: {
          'flows.tenant.id': delivery.tenantId,
          'flows.activity.id': delivery.id,
          'flows.source.id': delivery.sourceId,
          'flows.event': name,
          'flows.decisions.matched': decisions.filter((decision) => decision.decision === 'match').length,
          'flows.decisions.failed': decisions.filter((decision) => decision.decision === 'error').length,
          'flows.decisions.missed': misses,
        },
      });
      for (const decision of decisions) {
        write({
          name: `decision ${decision.decision}`,
          traceId,
          spanId: spanIdOf('decision', delivery.id, decision.triggerId),
          parentId: deliverySpan,
          start: at,
          end: at,
          attributes: {
            'flows.job.id': decision.jobId,
            'flows.trigger.id': decision.triggerId,
            'flows.decision': decision.decision,
            ...(decision.runId ? { 'flows.run.id': decision.runId } : {}),
            ...(decision.flowControl ? { 'flows.flow_control': decision.flowControl.action } : {}),
          },
          failed: decision.decision === 'error' ? decision.error : undefined,
        });
      }
    },

    executed(run) {
      // The run's cause is on its row: read only where traces are exported.
      void createRunsRepo(tenantDb(run.tenantId))
        .find(run.runId)
        .then((row) => {
          if (!row) return;
          const view = runView(row);
          const activityId = view.trigger.activityId;
          const [traceId, parentId] = activityId
            ? [traceIdOf(activityId), spanIdOf('decision', activityId, view.trigger.id!)]
            : [traceIdOf(view.invocationId ?? view.id), null];
          const usage = run.usage;
          write({
            name: `run ${run.outcome}`,
            traceId,
            spanId: spanIdOf('run', run.runId, String(run.attempt)),
            parentId,
            // The first attempt from the run's creation (its wait in the queue is part of it), a later one from its start.
            start: run.attempt === 1 ? row.createdAt : (run.runningAt ?? run.endedAt),
            end: run.endedAt,
            attributes: {
              'flows.tenant.id': run.tenantId,
              'flows.job.id': run.jobId,
              'flows.run.id': run.runId,
              'flows.run.attempt': run.attempt,
              'flows.run.outcome': run.outcome,
              'flows.trigger.type': view.trigger.type,
              ...(view.trigger.runId ? { 'flows.upstream_run.id': view.trigger.runId } : {}),
              ...(view.invocationId ? { 'flows.invocation.id': view.invocationId } : {}),
              ...(run.runningAt ? { 'flows.run.queued_ms': Math.max(0, run.runningAt.getTime() - row.createdAt.getTime()) } : {}),
              ...(run.agent ? { 'flows.agent.kind': run.agent } : {}),
              ...(usage ? { 'flows.agent.input_tokens': usage.inputTokens, 'flows.agent.output_tokens': usage.outputTokens, ...(usage.costUsd !== null ? { 'flows.agent.cost_usd': usage.costUsd } : {}) } : {}),
            },
            failed: run.outcome === 'succeeded' ? undefined : run.outcome,
          });
        })
        .catch((err: unknown) => logger.warn({ err, runId: run.runId }, 'tracing a run failed'));
    },

    async shutdown() {
      // A collector out of reach must not hold the shutdown past its grace: what is not out in 3 s is dropped.
      const dropped = new Promise<void>((resolve) => setTimeout(() => resolve(logger.warn('the last traces were not exported within 3 s; they are dropped')), SHUTDOWN_MS).unref());
      await Promise.race([provider.shutdown().catch((err: unknown) => logger.warn({ err }, 'exporting the last traces failed')), dropped]);
    },
  };
}
