// Process entry: config → database → app → listen; graceful shutdown on SIGTERM and SIGINT.
import './lib/compile-cache';
import type { Server } from 'node:http';
import type { Express } from 'express';
import { buildApp } from './app';
import { ConfigError, loadConfig, type Config, type LocalAgent } from './config';
import { isDatabaseUnavailable } from './db/errors';
import { openDatabase } from './db/open';
import { startBackground, stopBackground } from './instance';
import { createHttpServer } from './http/server';
import { openCgroups } from './integrations/run-limits';
import { INSTALL_HINT, sandboxProblem } from './integrations/sandbox';
import { createLogger, type Logger } from './lib/logger';
import { metricsApp } from './metrics/metrics-router';
import type { OwnerService } from './owners/owner-service';

const SHUTDOWN_GRACE_MS = 10_000;
/** How often what finished runs left behind (containers of a crashed start) is looked for. */
const LEFTOVERS_SWEEP_MS = 60_000;

function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`Invalid configuration: ${err.message}`);
    process.exit(1);
  }
}

/** Creates the bootstrap owner on first start, or says how to create one. */
async function ensureOwner(config: Config, owners: OwnerService, logger: Logger) {
  const outcome = await owners.bootstrap(config.bootstrapOwner);
  if (outcome === 'created') logger.info('created the owner named by FLOWS_BOOTSTRAP_OWNER_EMAIL');
  if (outcome !== 'missing') return;
  const create = "npm run owner:create -- --email you@example.com --password '<at least 10 characters>'";
  const signUp = config.signupOpen ? ` (or sign up at ${config.baseUrl.origin}/signup)` : '';
  logger.warn(`no owner exists yet; create one with: ${create}${signUp}`);
  // Apart from the log lines, where a person starting Flows for the first time sees it.
  process.stderr.write(`\n  No owner exists yet. Create the first one, then sign in at ${config.baseUrl.origin}/login${signUp}:\n\n    ${create}\n\n`);
}

/** Says at start how the local target will run agents, and when it cannot or should not. */
async function reportLocalAgent(agent: LocalAgent | null, logger: Logger) {
  if (!agent) {
    logger.info('no local execution target; to run agents on this host, set FLOWS_LOCAL_AGENT_COMMAND (see the README, "Your first run")');
  } else if (agent.sandbox === 'off') {
    logger.warn('FLOWS_LOCAL_AGENT_SANDBOX=off: the local agent runs as this server\'s user and can read its data directory and secret key; unsafe for webhook jobs, whose prompts strangers write');
  } else {
    const problem = await sandboxProblem(agent);
    if (problem) logger.warn(`the local target cannot run agents: ${problem}; ${INSTALL_HINT}`);
    else {
      const cgroups = openCgroups();
      logger.info(
        { network: agent.network, allow: agent.allow, binds: agent.binds?.map((bind) => bind.path), env: agent.env, limits: agent.limits, heldBy: cgroups ? `cgroup v${cgroups.version}` : 'rlimits' },
        'the local target runs agents in a bubblewrap sandbox',
      );
    }
  }
}

/** Listens, or fails with a message naming the port when it cannot (in use, not permitted). */
function listen(app: Express, port: number, host: string, variable = 'PORT'): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createHttpServer(app);
    server.once('error', (err: NodeJS.ErrnoException) => {
      const why = err.code === 'EADDRINUSE' ? 'is already in use' : err.code === 'EACCES' ? 'needs privileges this process lacks' : `cannot be used (${err.code ?? err.message})`;
      reject(new Error(`port ${port} on ${host} ${why}; stop the other process or set ${variable} to a free port`));
    });
    server.listen(port, host, () => resolve(server));
  });
}

async function main() {
  const config = configOrExit();
  const logger = createLogger(config.logLevel, undefined, { pretty: config.logFormat === 'pretty' });
  // pg-boss 10 completes a batch of work without awaiting it: when the database is lost at that moment,
  // the rejection is nobody's. Such a loss is logged (the work is taken again once its expiry passes); any
  // other unhandled rejection still ends the process, as Node would.
  process.on('unhandledRejection', (reason) => {
    if (!isDatabaseUnavailable(reason)) throw reason;
    logger.warn({ code: (reason as { code?: string }).code }, 'the database was lost under background work; it is taken again later');
  });
  const db = await openDatabase(config, logger);
  const built = await buildApp({ config, db, logger });
  const { app, owners, sweeps, jobs, runner } = built;
  await ensureOwner(config, owners, logger);
  await startBackground({ config, db, logger }, built);
  const sweepLeftovers = () =>
    runner.sweepLeftovers().then(
      (removed) => removed && logger.info({ removed }, 'removed what finished runs left behind (containers, agents\' kept state)'),
      (err) => logger.warn({ err }, 'removing what finished runs left behind failed'),
    );
  await sweepLeftovers();
  if (config.docker) logger.info({ host: config.docker.host, images: config.docker.images }, 'docker targets run on this Docker host');
  jobs.compileSaved().then(
    (refused) => {
      for (const job of refused) logger.warn(job, 'a job\'s input schema is refused: its invocations answer 409 invalid_input_schema until it is saved with a corrected one');
    },
    (err) => logger.warn({ err }, 'checking the input schemas of saved jobs failed'),
  );
  await reportLocalAgent(config.localAgent, logger);
  // What this instance's executors left behind is looked for by this instance (each may have its own Docker host).
  setInterval(sweepLeftovers, LEFTOVERS_SWEEP_MS).unref();

  const server = await listen(app, config.port, config.host);
  logger.info({ url: config.baseUrl.href, database: config.databaseProvider, instance: sweeps.instanceId }, `Flows is listening on ${config.baseUrl.href}`);
  const metricsServer = config.metrics.port === null ? null : await listen(metricsApp(built.metrics, logger), config.metrics.port, config.host, 'FLOWS_METRICS_PORT');
  if (metricsServer) logger.info({ port: config.metrics.port, host: config.host }, `metrics are served on port ${config.metrics.port} at /metrics`);

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS).unref();
    metricsServer?.close();
    server.close(async () => {
      await stopBackground(built);
      await db.$disconnect();
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err) => {
  console.error('Flows failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
