// The one place the domains are wired together: each service gets its dependencies here, the background
// runner gets the work queue and the executors, and the app gets one map of handlers.
import type { Config } from './config';
import { listenForChanges } from './db/change-feed';
import type { Db } from './db/client';
import { forTenant, type TenantDb } from './db/tenant-scope';
import { eventsHandlers } from './events/events-handlers';
import { createEventsService, type EventType } from './events/events-service';
import { eventsSweeps } from './events/events-sweeps';
import type { HandlerMap } from './http/types';
import type { Executor } from './integrations/executor';
import { connectionsHandlers } from './integrations/connections-handlers';
import { createConnectionsService } from './integrations/connections-service';
import { createDiagnosticsService } from './integrations/diagnostics-service';
import { dockerClient } from './integrations/docker-client';
import { createDockerExecutor } from './integrations/docker-executor';
import { createLocalExecutor, type LocalExecutorOptions } from './integrations/local-executor';
import { createVmhostExecutor, type VmhostTiming } from './integrations/vmhost-executor';
import { targetsHandlers } from './integrations/targets-handlers';
import { createTargetsService } from './integrations/targets-service';
import { testedKeys } from './jobs/flow-control-fns';
import { jobsHandlers } from './jobs/jobs-handlers';
import { createJobsService } from './jobs/jobs-service';
import { jobsSweeps } from './jobs/jobs-sweeps';
import type { Logger } from './lib/logger';
import { newId } from './lib/ids';
import { lruFor } from './lib/lru';
import { createOutbound } from './lib/outbound';
import { createSecretBox } from './lib/secrets';
import { githubAppsHandlers } from './repositories/github-apps-handlers';
import { createGithubAppsService } from './repositories/github-apps-service';
import { sendersHandlers } from './senders/senders-handlers';
import { createSendersService } from './senders/senders-service';
import { createSenderReporting } from './senders/sender-reporter';
import { createMirrors, NO_MIRRORS } from './repositories/mirrors';
import { createReporting } from './repositories/reporter';
import { createWorkspaces } from './repositories/workspaces';
import { DEFAULT_LIMITS } from './lib/resource-limits';
import { secretsHandlers } from './secrets/secrets-handlers';
import { createSecretsService } from './secrets/secrets-service';
import { createMetrics, NO_METRICS } from './metrics/metrics';
import { createTracing, NO_TRACING } from './metrics/tracing';
import { deploymentFigures } from './metrics/metrics-figures';
import { createInProcessQueue, type WorkQueue } from './lib/work-queue';
import { createPgBossQueue } from './lib/work-queue-pg';
import { createRunner } from './runs/runner';
import { createRetention } from './runs/engine/retention';
import { createRunsSweeps } from './runs/runs-sweeps';
import { runsHandlers } from './runs/runs-handlers';
import { createRunsService } from './runs/runs-service';
import { createChainEvaluation } from './triggers/chain-evaluation';
import { createScheduler } from './triggers/schedule-evaluation';
import { triggersHandlers } from './triggers/triggers-handlers';
import { createTriggersService } from './triggers/triggers-service';
import { usageHandlers } from './usage/usage-handlers';
import { createUsageService } from './usage/usage-service';
import { intakeRouter } from './webhooks/intake-router';
import { webhooksHandlers } from './webhooks/webhooks-handlers';
import { createWebhooksService } from './webhooks/webhooks-service';
import { KEPT_PER_SOURCE } from './webhooks/webhooks-refusals';
import { webhooksSweeps } from './webhooks/webhooks-sweeps';

export function createDomains({
  config,
  db,
  logger,
  queue = config.databaseProvider === 'postgresql' ? createPgBossQueue({ connectionString: config.databaseUrl, logger }) : createInProcessQueue(logger),
  now = () => new Date(),
  vmhostTiming,
  localEgress,
  reportEditEveryMs,
}: {
  config: Config;
  db: Db;
  logger: Logger;
  queue?: WorkQueue;
  /** The clock schedules and event retries read (tests move it). */
  now?: () => Date;
  /** How long VMs may boot and how often they are polled (tests shorten it). */
  vmhostTiming?: VmhostTiming;
  /** Where the local sandbox's egress proxy resolves names and which addresses it counts as public (tests: a stand-in on loopback). */
  localEgress?: LocalExecutorOptions['egress'];
  /** How often a run's progress comment may be edited, at most (tests shorten it). */
  reportEditEveryMs?: number;
}) {
  // A tenant's bound client is kept: binding one is an extension of the client, about 0.2 ms each time.
  const bound = lruFor<TenantDb>({ max: 1000, maxWeight: 100_000, weigh: (tenantId) => tenantId.length });
  const tenantDb = (tenantId: string) => bound.get(tenantId, () => forTenant(db, tenantId));
  /** This process among those sharing the database: its containers and the runs it executes carry it. */
  const instanceId = newId('inst');

  // Heartbeats keep real time, whatever clock a test gives schedules.
  const sweeps = createRunsSweeps({ db, instanceId, url: config.baseUrl.origin, lapseMs: config.instanceLapseSeconds * 1000, now: () => new Date(), logger });

  const jobsAcross = jobsSweeps(db);

  const box = createSecretBox(config.secretKey, config.previousSecretKeys);
  // Every call to a URL a tenant gave (event endpoints, provider APIs) goes through it.
  const outbound = createOutbound({ allowPrivateNetwork: config.allowPrivateNetwork });
  const docker = config.docker && { ...config.docker, client: dockerClient(config.docker.host) };
  const metrics = config.metrics.token !== null || config.metrics.port !== null ? createMetrics({ figures: deploymentFigures(db) }) : NO_METRICS;
  const tracing = config.tracing ? createTracing({ tenantDb, instanceId, logger }) : NO_TRACING;
  const events = createEventsService({
    box,
    queue,
    tenantDb,
    logger,
    outbound,
    now,
    attempted: metrics.eventAttempt,
    ...eventsSweeps(db),
  });
  const notifyRun = (tenantId: string, event: string, runId: string) => {
    metrics.runEvent(event);
    events.emitRun(tenantId, `run.${event}` as EventType, runId);
  };
  const connections = createConnectionsService({ box, outbound });
  const targets = createTargetsService({ localAgent: config.localAgent, docker, connections });
  const executors: Partial<Record<'local' | 'vmhost' | 'docker', Executor>> = {
    vmhost: createVmhostExecutor({ tenantDb, box, outbound, timing: vmhostTiming }),
    ...(config.localAgent ? { local: createLocalExecutor({ ...config.localAgent, egress: localEgress }) } : {}),
    ...(docker && {
      docker: createDockerExecutor({
        docker: docker.client,
        instanceId,
        allowedImages: docker.images,
        settingsOf: (tenantId, targetId) => targets.dockerSettings(tenantDb(tenantId), targetId),
      }),
    }),
  };
  const secrets = createSecretsService({ box });
  const githubApps = createGithubAppsService({ box, outbound });
  // A repository is as large as the local sandbox lets a workspace be (FLOWS_LOCAL_AGENT_WORKSPACE_MB).
  const workspaceMb = (config.localAgent?.limits ?? DEFAULT_LIMITS).workspaceMb;
  const mirrors = config.repositoryCache ? createMirrors({ dir: config.repositoryCache.dir, maxBytes: config.repositoryCache.maxMb * 1024 * 1024 }) : NO_MIRRORS;

  const senders = createSendersService({ box, outbound });
  const workspaces = createWorkspaces({ apps: githubApps, secrets, outbound, baseUrl: config.baseUrl, maxBytes: workspaceMb * 1024 * 1024, mirrors, gitlab: senders.gitlabRepositories });
  const reporting = {
    github: createReporting({ apps: githubApps, baseUrl: config.baseUrl, editEveryMs: reportEditEveryMs }),
    senders: createSenderReporting({ senders, baseUrl: config.baseUrl, editEveryMs: reportEditEveryMs }),
  };
  // Deleting a job cancels its runs and a new concurrency limit may start queued ones, while runs read
  // jobs: the runs service and the runner are made after the jobs service and reached late-bound.
  let runs: ReturnType<typeof createRunsService>;
  // On PostgreSQL other instances keep the same tenants' jobs: they hear of every change.
  const changes =
    config.databaseProvider === 'postgresql' &&
    listenForChanges(config.databaseUrl, logger, {
      heard: (tenantId) => jobs.heardChange(tenantId),
      stopped: (runId) => runner.stopped(runId),
      missed: () => {
        jobs.forgetKept();
        runner.recheckExecutions().catch((err) => logger.warn({ err }, 'checking executions for stops missed failed'));
      },
    });
  const jobs = createJobsService({
    targets,
    secrets,
    githubApps,
    senders,
    announceChange: (tenantId) => changes && changes.announce(tenantId).catch((err) => logger.warn({ err, tenantId }, 'telling other instances of a job change failed')),
    onDeleted: (tdb, jobId) => runs.cancelRunsOfJob(tdb, jobId),
    onLimitChanged: (tenantId, jobId) => runner.dispatch(tenantId, jobId),
    invocableJobs: jobsAcross.invocableJobs,
  });
  const runner = createRunner({
    tenantDb,
    jobs,
    workspaces,
    reporting,
    targets,
    secrets,
    executors,
    queue,
    // On PostgreSQL, dispatches for now stay in this process (engine/dispatch.ts).
    local: config.databaseProvider === 'postgresql' ? createInProcessQueue(logger) : queue,
    logger,
    instanceId,
    notify: notifyRun,
    executed: (run) => {
      metrics.executed(run);
      tracing.executed(run);
    },
    sweeps,
    traceMaxLines: config.traceMaxLines,
    modelPrices: config.modelPrices,
    announceStop: (runId) => changes && changes.announceStop(runId).catch((err) => logger.warn({ err, runId }, 'telling other instances of a stop failed')),
  });
  const usage = createUsageService({ now, defaultMonthlyBudgetUsd: config.tenantMonthlyBudgetUsd });
  runs = createRunsService({ jobs, runner, notify: notifyRun, budgetRefusal: (db) => usage.refusal(db) });
  // Triggers' evaluations start runs: schedules' slots, chains on runs that end (webhooks': the webhooks service).
  const scheduler = createScheduler({ tenantDb, start: runs.startTriggered, logger, now, scheduleTriggers: jobsAcross.scheduleTriggers });
  createChainEvaluation({ queue, tenantDb, live: jobs.live, finishedRun: runs.finishedRun, start: runs.startTriggered, logger });
  const triggers = createTriggersService({ flowKeys: testedKeys });
  const webhooks = createWebhooksService({
    box,
    baseUrl: config.baseUrl,
    queue,
    runs,
    jobs,
    tenantDb,
    apps: githubApps,
    logger,
    notify: (tenantId, delivery) => events.emitWebhookReceived(tenantId, delivery),
    replayWindowSeconds: config.webhookReplayWindowSeconds,
    evaluated: tracing.evaluated,
    ...webhooksSweeps(db),
  });

  const diagnostics = createDiagnosticsService({ box, outbound, timing: vmhostTiming });
  const webhookRecords = webhooksSweeps(db);
  const retention = createRetention({
    config: config.retention,
    runs: sweeps,
    webhooks: { ...webhookRecords, pruneCrowdedRefusals: () => webhookRecords.pruneCrowdedRefusals(KEPT_PER_SOURCE) },
    events: eventsSweeps(db),
    intakeBusy: webhooks.intakeBusy,
  });
  const handlers: HandlerMap = {
    ...jobsHandlers(jobs),
    ...runsHandlers(runs),
    ...usageHandlers(usage),
    ...targetsHandlers(targets),
    ...connectionsHandlers(connections, diagnostics),
    ...githubAppsHandlers(githubApps),
    ...sendersHandlers(senders),
    ...triggersHandlers(triggers),
    ...webhooksHandlers(webhooks),
    ...eventsHandlers(events),
    ...secretsHandlers(secrets),
  };
  return { handlers, queue, sweeps, retention, changes: changes || null, jobs, runs, runner, scheduler, events, webhooks, targets, connections, diagnostics, metrics, tracing, intake: intakeRouter(webhooks, metrics) };
}

export type Domains = ReturnType<typeof createDomains>;
