// The rules of inbound webhooks: sources (with a signing secret shown once and kept sealed), intake
// (verify, record once, answer at once, evaluate after: triggers/webhook-evaluation.ts), refusals (which check
// failed, recorded for the owner: webhooks-refusals.ts), activity and backtest.
import type { components } from '../../generated/openapi';
import type { TenantDb } from '../db/tenant-scope';
import { BODY_LIMIT, containsUnstorableText, MAX_DEPTH, nestsTooDeep } from '../http/body';
import type { KeysetRequest } from '../http/pagination';
import type { Trigger } from '../jobs/jobs-fns';
import type { LiveJobs } from '../jobs/jobs-catalog';
import type { JobRow } from '../jobs/jobs-repo';
import { jobView, type JobsService } from '../jobs/jobs-service';
import { Conflict, NotFound, PayloadTooLarge, ValidationFailed } from '../lib/errors';
import { newId } from '../lib/ids';
import { checkInstant } from '../lib/instants';
import { keptFor } from '../lib/kept';
import type { Logger } from '../lib/logger';
import { newSigningSecret, type SecretBox } from '../lib/secrets';
import type { WorkQueue } from '../lib/work-queue';
import { simulateFlow } from '../runs/engine/admission';
import type { GithubAppsService } from '../repositories/github-apps-service';
import type { RunsService } from '../runs/runs-service';
import { debounceMs, durationMs } from '../jobs/flow-control-fns';
import { eventName } from '../triggers/event-patterns-fns';
import { answersEmpty, verifyDelivery, webhookContext, type Handshake, type WebhookFormat } from './webhooks-fns';
import { decideCandidates, decideDelivery } from '../triggers/acts-fns';
import { createDeliveryEvaluation, type EvaluationDeps, type PendingDeliveries } from '../triggers/webhook-evaluation';
import { createDeliveryRecording } from './webhooks-recording';
import { createRefusalRecording, refusalView, unknownSource } from './webhooks-refusals';
import { createWebhooksRepo, type ActivityRow, type SourceRow } from './webhooks-repo';

type SourceView = components['schemas']['WebhookSource'];
type SourceWithSecret = components['schemas']['WebhookSourceWithSecret'];
type ActivityView = components['schemas']['WebhookActivity'];
type SourceCreate = components['schemas']['WebhookSourceCreate'];
type BacktestRequest = components['schemas']['BacktestRequest'];
type BacktestResult = components['schemas']['BacktestResult'];
type WebhookTrigger = components['schemas']['WebhookTrigger'] & { id: string; enabled: boolean };

const BACKTEST_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;
const BACKTEST_MAX = 10_000;
/** Sources are read again after this long: a secret rotated or a source deleted by another instance. */
const SOURCES_KEPT_MS = 5_000;
/** Intake counts as busy for this long after a delivery (evaluation yields to it). */
const INTAKE_BUSY_MS = 250;

const sourceNotFound = () => new NotFound('No such webhook source.');

type LiveSource = SourceRow & { tenantId: string };

export interface WebhooksDeps {
  box: SecretBox;
  baseUrl: URL;
  queue: WorkQueue;
  runs: Pick<RunsService, 'startTriggered' | 'typicalRunMs'>;
  jobs: Pick<JobsService, 'find' | 'live' | 'draftTriggers' | 'flowDraft'>;
  tenantDb: (tenantId: string) => TenantDb;
  /** A live source by id, whatever its tenant: intake learns the tenant from the source. */
  sourceById(id: string): Promise<LiveSource | null>;
  pendingDeliveries: PendingDeliveries;
  /** The sealed webhook secret of the GitHub App a source binds to. */
  apps: Pick<GithubAppsService, 'webhookSecretOf'>;
  logger: Logger;
  /** A delivery was recorded: outbound events. */
  notify(tenantId: string, delivery: Record<string, unknown>): void;
  /** How long a body is recognised as a replay (FLOWS_WEBHOOK_REPLAY_WINDOW_SECONDS); 0: never. */
  replayWindowSeconds: number;
  /** Told of each delivery once its decisions are saved (tracing). */
  evaluated?: EvaluationDeps<JobRow>['evaluated'];
  now?: () => Date;
}

/** Senders that make the secret they sign with: a source of theirs is given it. */
const SENDER_MADE_SECRET: Partial<Record<WebhookFormat, string>> = { slack: "the Slack app's signing secret (Basic Information → App Credentials)", sentry: "the Sentry integration's client secret" };

/** The secret a source verifies with: the one the sender made (`given`), or a new one Flows makes. */
function chosenSecret(format: WebhookFormat, given: string | undefined): { value: string; made: boolean } {
  if (given !== undefined) return { value: given, made: false };
  const needed = SENDER_MADE_SECRET[format];
  if (needed) throw new ValidationFailed(`A ${format} source verifies with ${needed}: send it as \`signingSecret\`.`);
  return { value: newSigningSecret(), made: true };
}

/**
 * How intake answers a sender: the delivery's recording (202), an empty 200 where the sender shows what it
 * gets to a person (`empty`: a Slack slash command), or the answer its protocol asks for (a handshake).
 */
export type IntakeAnswer = { activityId: string; duplicate: boolean; empty?: true } | Handshake;

export function createWebhooksService({ box, baseUrl, queue, runs, jobs, tenantDb, sourceById, pendingDeliveries, apps, logger, notify, replayWindowSeconds, evaluated, now = () => new Date() }: WebhooksDeps) {
  const sources = keptFor<LiveSource | null>(SOURCES_KEPT_MS);
  let lastIntakeAt = 0;
  const intakeBusy = () => Date.now() - lastIntakeAt < INTAKE_BUSY_MS;
  const evaluation = createDeliveryEvaluation({
    queue,
    start: runs.startTriggered,
    live: jobs.live,
    tenantDb,
    pendingDeliveries,
    record: (db, deliveryId, decisions, misses, at) => createWebhooksRepo(db).setOutcome(deliveryId, decisions, misses, at),
    logger,
    now,
    intakeBusy,
    evaluated,
  });
  const recording = createDeliveryRecording({ tenantDb, logger, replayWindowSeconds });
  const refusals = createRefusalRecording({ tenantDb, logger });

  const view = (row: SourceRow): SourceView => ({
    id: row.id,
    name: row.name,
    format: row.format as WebhookFormat,
    signatureHeader: row.signatureHeader,
    githubAppId: row.githubAppId,
    intakeUrl: new URL(`/hooks/${row.id}`, baseUrl).href,
    createdAt: row.createdAt.toISOString(),
  });

  /**
   * The activity as recorded, with its misses' decisions worked out again (only a count is stored) from its
   * context and the source's triggers as they are now, flagged `recomputed`.
   */
  const activityView = (row: ActivityRow, live: LiveJobs): ActivityView => ({
    id: row.id,
    sourceId: row.sourceId,
    deliveryId: row.deliveryId,
    event: row.event,
    action: row.action,
    receivedAt: row.receivedAt.toISOString(),
    evaluatedAt: row.evaluatedAt?.toISOString() ?? null,
    context: row.context as ActivityView['context'],
    // Recorded before decisions carried their details and run: those read as having none.
    decisions: [...(row.decisions as ActivityView['decisions']).map((decision) => ({ ...decision, details: decision.details ?? [], runId: decision.runId ?? null })), ...recomputedMisses(row, live)],
    missCount: row.missCount,
    runIds: row.runIds as string[],
  });

  function recomputedMisses(row: ActivityRow, live: LiveJobs): ActivityView['decisions'] {
    if (row.missCount === 0) return [];
    const stored = new Set((row.decisions as ActivityView['decisions']).map((decision) => decision.triggerId));
    const candidates = live.webhookCandidates(row.sourceId).filter((candidate) => !stored.has(candidate.id));
    return decideCandidates(candidates, eventName(row.event, row.action), row.context as Record<string, unknown>, true).decided.map(({ candidate, decision }) => ({
      jobId: candidate.job.id,
      ...decision,
      runId: null,
      recomputed: true,
    }));
  }

  async function foundSource(db: TenantDb, id: string) {
    const row = await createWebhooksRepo(db).findSource(id);
    if (!row) throw sourceNotFound();
    return row;
  }

  const liveSource = (sourceId: string) => sources.get(sourceId, () => sourceById(sourceId));

  /**
   * The source and its verified delivery, or the refusal (recorded) its sender gets. A kept source whose
   * signature does not match is read again once: its secret may have been rotated by another instance.
   */
  async function verified(sourceId: string, headers: Record<string, string | string[] | undefined>, raw: Buffer, receivedAt: Date) {
    for (let reread = false; ; reread = true) {
      const source = await liveSource(sourceId);
      if (!source) throw unknownSource(sourceId);
      const result = verifyDelivery({ format: source.format as WebhookFormat, secret: box.open(source.secretCiphertext), signatureHeader: source.signatureHeader, headers, raw, now: receivedAt.getTime() });
      if (!('refused' in result)) return { source, delivery: result };
      if (reread || result.refused !== 'invalid_signature') throw await refusals.refuse(source, result, headers, { bytes: raw.length, raw }, receivedAt);
      sources.forget(sourceId);
    }
  }

  return {
    async createSource(db: TenantDb, input: SourceCreate): Promise<SourceWithSecret> {
      if (input.signatureHeader !== undefined && input.format !== 'hmac-sha256') {
        throw new ValidationFailed('`signatureHeader` is accepted only for the hmac-sha256 format.');
      }
      if (input.githubAppId !== undefined && input.format !== 'github') throw new ValidationFailed('`githubAppId` binds only a source of the github format.');
      if (input.githubAppId !== undefined && input.signingSecret !== undefined) throw new ValidationFailed("A source bound to a GitHub App verifies with the app's webhook secret: `signingSecret` is not taken with `githubAppId`.");
      const secret = input.githubAppId === undefined ? chosenSecret(input.format, input.signingSecret) : null;
      const row = await createWebhooksRepo(db).createSource({
        id: newId('src'),
        name: input.name,
        format: input.format,
        signatureHeader: input.format === 'hmac-sha256' ? (input.signatureHeader ?? null) : null,
        secretCiphertext: secret === null ? await apps.webhookSecretOf(db, input.githubAppId!) : box.seal(secret.value),
        githubAppId: input.githubAppId ?? null,
      });
      // Only a secret Flows made is shown: one the sender made stays where it came from.
      return { ...view(row), signingSecret: secret?.made ? secret.value : null };
    },

    async listSources(db: TenantDb, page: KeysetRequest<string>): Promise<SourceView[]> {
      return (await createWebhooksRepo(db).listSources(page)).map(view);
    },

    async getSource(db: TenantDb, id: string): Promise<SourceView> {
      return view(await foundSource(db, id));
    },

    async rotateSecret(db: TenantDb, id: string, given?: string): Promise<SourceWithSecret> {
      const row = await foundSource(db, id);
      if (row.githubAppId) throw new Conflict('conflict', `This source verifies deliveries with the webhook secret of the GitHub App connection ${row.githubAppId}: change that secret on GitHub and on the connection (PATCH /api/v1/github-apps/${row.githubAppId}, \`webhookSecret\`).`);
      const secret = chosenSecret(row.format as WebhookFormat, given);
      if ((await createWebhooksRepo(db).setSecret(row.id, box.seal(secret.value))).count === 0) throw sourceNotFound();
      sources.forget(row.id);
      return { ...view(row), signingSecret: secret.made ? secret.value : null };
    },

    async deleteSource(db: TenantDb, id: string): Promise<void> {
      const repo = createWebhooksRepo(db);
      const row = await foundSource(db, id);
      const using = await repo.triggersUsing(row.id);
      if (using > 0) throw new Conflict('in_use', `${using} job trigger${using === 1 ? '' : 's'} still use${using === 1 ? 's' : ''} this source; change or delete them first.`);
      if ((await repo.deleteSource(row.id)).count === 0) throw sourceNotFound();
      sources.forget(row.id);
    },

    async listActivity(db: TenantDb, page: KeysetRequest<string>, filter: { sourceId?: string }): Promise<ActivityView[]> {
      const rows = await createWebhooksRepo(db).listActivity(page, filter);
      const live = await jobs.live(db);
      return rows.map((row) => activityView(row, live));
    },

    async getActivity(db: TenantDb, id: string): Promise<ActivityView> {
      const row = await createWebhooksRepo(db).findActivity(id);
      if (!row) throw new NotFound('No such webhook activity.');
      return activityView(row, await jobs.live(db));
    },

    /**
     * What the job's webhook triggers (or a draft set) would decide on the deliveries recorded in a window,
     * newest first. Nothing is started or saved.
     */
    async backtest(db: TenantDb, jobRef: string, input: BacktestRequest): Promise<BacktestResult> {
      const job = await jobs.find(db, jobRef);
      if (!job) throw new NotFound('No such job.');
      let triggers: Trigger[] = jobView(job).triggers;
      if (input.triggers) triggers = await jobs.draftTriggers(db, job, input.triggers);
      const candidates = triggers.filter((trigger): trigger is WebhookTrigger => trigger.type === 'webhook' && trigger.enabled);
      // The contract's date-time format has checked what was sent; a derived bound is checked here.
      const until = input.until ? new Date(input.until) : now();
      const since = input.since ? new Date(input.since) : checkInstant(new Date(until.getTime() - BACKTEST_WINDOW_MS), 'since', '7 days before `until`');
      if (since >= until) throw new ValidationFailed('`since` must be before `until`.');
      const deliveries = candidates.length
        ? await createWebhooksRepo(db).activityInWindow([...new Set(candidates.map((trigger) => trigger.sourceId))], since, until, input.limit ?? BACKTEST_MAX)
        : [];
      // Grouped by source once, not once per delivery (up to 10,000 of them).
      const bySource = new Map<string, { id: string; config: WebhookTrigger }[]>();
      for (const trigger of candidates) {
        if (!bySource.has(trigger.sourceId)) bySource.set(trigger.sourceId, []);
        bySource.get(trigger.sourceId)!.push({ id: trigger.id, config: trigger });
      }
      const flow = jobs.flowDraft(job, triggers, input.flowControl);
      const results: BacktestResult['results'] = deliveries.map((delivery) => {
        const name = eventName(delivery.event, delivery.action);
        const decisions = decideDelivery(bySource.get(delivery.sourceId) ?? [], name, delivery.context as Record<string, unknown>).map(({ decision }) => decision);
        return { activityId: delivery.id, deliveryId: delivery.deliveryId, event: name, receivedAt: delivery.receivedAt.toISOString(), decisions };
      });
      const { concurrency, rateLimit, debounce } = flow.flowControl;
      let assumedRunSeconds: number | undefined;
      if (concurrency || rateLimit || debounce) {
        const runMs = concurrency ? await runs.typicalRunMs(db, job.id) : 0;
        if (concurrency) assumedRunSeconds = Math.round(runMs / 100) / 10;
        // The matches in time order (results are newest first), each with the keys its run would take.
        const identity = { id: job.id, slug: job.slug, name: job.name };
        const arrivals = [...results].reverse().flatMap((result, i) => {
          const context = { ...(deliveries[results.length - 1 - i].context as Record<string, unknown>), job: identity };
          return result.decisions.filter((decision) => decision.decision === 'match').map((decision) => ({ at: new Date(result.receivedAt).getTime(), ...flow.keysOf(context), of: { decision, activityId: result.activityId } }));
        });
        const outcomes = simulateFlow(arrivals, {
          concurrency: concurrency ?? null,
          rateLimit: rateLimit ? { ...rateLimit, periodMs: durationMs(rateLimit.period)! } : null,
          debounce: debounce ? debounceMs(debounce) : null,
          runMs,
        });
        outcomes.forEach(({ outcome, by, message }, i) => {
          arrivals[i].of.decision.flowControl = { outcome, ...(by && { byActivityId: by.activityId }), message };
        });
      }
      return {
        evaluated: results.length,
        matched: results.filter((result) => result.decisions.some((decision) => decision.decision === 'match')).length,
        since: since.toISOString(),
        until: until.toISOString(),
        ...(assumedRunSeconds !== undefined && { assumedRunSeconds }),
        results,
      };
    },

    /** Verifies and records a delivery, answering before any trigger evaluates it. */
    async intake(sourceId: string, headers: Record<string, string | string[] | undefined>, raw: Buffer): Promise<IntakeAnswer> {
      lastIntakeAt = Date.now();
      const receivedAt = now();
      const { source, delivery } = await verified(sourceId, headers, raw, receivedAt);
      if ('handshake' in delivery) return delivery;
      const unstorable = nestsTooDeep(delivery.payload)
        ? `The delivery body nests deeper than ${MAX_DEPTH} levels.`
        : containsUnstorableText(delivery.payload) && 'The delivery body holds a NUL character (\\u0000) or an unpaired surrogate (\\ud800 to \\udfff), which cannot be stored.';
      if (unstorable) throw await refusals.refuse(source, { refused: 'invalid_json', message: unstorable }, headers, { bytes: raw.length, raw }, receivedAt);
      const context = webhookContext(source, delivery, headers, receivedAt);
      const bodyHash = recording.bodyHashOf(source.format as WebhookFormat, raw);
      const activity = { id: newId('act'), sourceId: source.id, deliveryId: delivery.deliveryId, event: delivery.event, action: delivery.action, receivedAt, context, bodyHash };
      const recorded = { ...(await recording.record(source.tenantId, activity)), ...(answersEmpty(source.format as WebhookFormat, delivery) && { empty: true as const }) };
      if (recorded.duplicate) return recorded;
      evaluation.soon();
      notify(source.tenantId, { activityId: activity.id, sourceId: source.id, deliveryId: delivery.deliveryId, event: delivery.event, action: delivery.action, receivedAt: receivedAt.toISOString() });
      return recorded;
    },

    /**
     * The answer to a delivery refused before its body was read (over the size limit): recorded for its
     * source, or `unread` as it is when no source has the URL.
     */
    async refuseUnread(sourceId: string, headers: Record<string, string | string[] | undefined>, bytes: number, unread: Error): Promise<Error> {
      const source = await liveSource(sourceId);
      if (!source) return unread;
      return refusals.refuse(source, { refused: 'payload_too_large', message: new PayloadTooLarge(BODY_LIMIT).message }, headers, { bytes, raw: null }, now());
    },

    /** A source's refused deliveries, newest first, each with what to check. */
    async listRefusals(db: TenantDb, sourceId: string, page: KeysetRequest<string>) {
      const source = await foundSource(db, sourceId);
      return (await createWebhooksRepo(db).listRefusals(source.id, page)).map((row) => refusalView(row, source));
    },

    /** Evaluates the deliveries left waiting by a stop or a failure (at start). */
    resumeEvaluation: evaluation.soon,

    /** Whether deliveries are arriving: background work yields to them. */
    intakeBusy,
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
