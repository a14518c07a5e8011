// Composes the Express app from its parts. Dependencies come in, so a test can build a second app cheaply.
import type { LocalExecutorOptions } from './integrations/local-executor';
import cookieParser from 'cookie-parser';
import express, { type Express, type Request, type RequestHandler } from 'express';
import type Provider from 'oidc-provider';
import helmet from 'helmet';
import { accountHandlers } from './account/account-handlers';
import { createAccountService } from './account/account-service';
import { createBearerVerifier } from './auth/bearer-verifier';
import { createSessionService, SESSION_COOKIE, type SessionService } from './auth/session-service';
import type { Config } from './config';
import type { Db } from './db/client';
import { forTenant } from './db/tenant-scope';
import { createDomains, type Domains } from './domains';
import type { VmhostTiming } from './integrations/vmhost-executor';
import { createApi, type Api } from './http/api';
import { noStore, oversizedBody, usableRequestLine } from './http/api-guards';
import { jsonBody, requireJson } from './http/body';
import { loadContract, type Contract } from './http/contract';
import { docsRouter } from './http/docs';
import { errorHandler } from './http/error-handler';
import { healthRouter } from './http/health';
import { createRateLimits, rateLimit, type Policy, type PolicyName } from './http/rate-limit';
import { requestContext } from './http/request-context';
import { metricsRouter } from './metrics/metrics-router';
import { createAuthorizer } from './http/security';
import { NotFound } from './lib/errors';
import { sha256 } from './lib/hash';
import { deriveKey } from './lib/keys';
import type { Logger } from './lib/logger';
import { packageVersion } from './lib/paths';
import { accessHandlers } from './oauth/access-handlers';
import { createAccessService } from './oauth/access-service';
import { protectedResourceMetadata } from './oauth/protected-resource';
import type { ProviderDeps } from './oauth/provider';
import { resourcesOf } from './oauth/resources';
import { createOwnerService, type OwnerService } from './owners/owner-service';
import type { McpDeps } from './mcp/mcp-router';
import { jobsPages } from './jobs/jobs-pages';
import { consoleScripts } from './pages/console-layout';
import { consolePages } from './pages/console-pages';
import { interactionPages } from './pages/interaction-pages';
import { sessionPages } from './pages/session-pages';
import { runsPages } from './runs/runs-pages';
import { invocationOf } from './runs/runs-handlers';
import { webhooksPages } from './webhooks/webhooks-pages';
import { eventsPages } from './events/events-pages';
import { integrationsPages } from './integrations/integrations-pages';

export interface AppDeps {
  config: Config;
  db: Db;
  logger: Logger;
  contract?: Contract;
  /** Tighter or looser rate limits (tests). */
  policies?: Partial<Record<PolicyName, Policy>>;
  /** The clock schedules and event retries read (tests). */
  now?: () => Date;
  /** VM boot and polling times (tests). */
  vmhostTiming?: VmhostTiming;
  /** How often a run's progress comment may be edited, at most (tests shorten it). */
  reportEditEveryMs?: number;
  /** The local sandbox's name resolution and public addresses (tests: a stand-in on loopback). */
  localEgress?: LocalExecutorOptions['egress'];
}

export interface App {
  app: Express;
  api: Api;
  sessions: SessionService;
  owners: OwnerService;
  /** The authorization server (made when first read). */
  provider: Provider;
  cookieSecret: string;
  /** On PostgreSQL, what carries changes between instances (closed at shutdown). */
  changes: Domains['changes'];
  /** Background work; started here, stopped at shutdown. */
  queue: Domains['queue'];
  /** This instance's heartbeat and the runs' sweeps across tenants. */
  sweeps: Domains['sweeps'];
  /** Deletes what is older than the operator keeps. */
  retention: Domains['retention'];
  jobs: Domains['jobs'];
  runner: Domains['runner'];
  scheduler: Domains['scheduler'];
  events: Domains['events'];
  webhooks: Domains['webhooks'];
  /** This instance's metrics, for the metrics port. */
  metrics: Domains['metrics'];
  /** Traces exported over OTLP, when configured (flushed at shutdown). */
  tracing: Domains['tracing'];
}

/** API calls are counted per credential (bearer token or session), and all of them per address too. */
function apiCredential(req: Request): string | null {
  const bearer = /^Bearer (\S+)$/i.exec(req.get('authorization') ?? '')?.[1];
  if (bearer) return `token:${sha256(bearer)}`;
  const session = req.signedCookies?.[SESSION_COOKIE];
  return typeof session === 'string' ? `session:${sha256(session)}` : null;
}

const byAddress = (req: Request) => req.ip ?? null;

/**
 * The authorization server, made at its first use: oidc-provider costs a start about 230 ms of CPU and an
 * instance 16 MB that API calls with tokens already issued never need (their check reads the database).
 */
function providerAtFirstUse(deps: ProviderDeps): () => Provider {
  let provider: Provider | undefined;
  return () => (provider ??= (require('./oauth/provider') as typeof import('./oauth/provider')).createProvider(deps));
}

/** The authorization server answers only its own paths; everything else stays with Express. */
function mountProvider(provider: () => Provider): RequestHandler {
  let callback: ReturnType<Provider['callback']> | undefined;
  const owns = (path: string) =>
    path.startsWith('/oauth/') || path === '/device' || path.startsWith('/device/') || path === '/.well-known/openid-configuration' || path === '/.well-known/oauth-authorization-server';
  return (req, res, next) => (owns(req.path) ? (callback ??= provider().callback())(req, res) : next());
}

/**
 * /mcp, built at its first request: the MCP SDK costs a start about 100 ms of CPU that an instance no MCP
 * client calls never needs.
 */
function mcpAtFirstUse(deps: McpDeps): RequestHandler {
  let router: RequestHandler | undefined;
  return (req, res, next) => {
    if (req.path !== '/mcp' && !req.path.startsWith('/mcp/')) return next();
    router ??= (require('./mcp/mcp-router') as typeof import('./mcp/mcp-router')).mcpRouter(deps);
    router(req, res, next);
  };
}

export async function buildApp({ config, db, logger, contract = loadContract(), policies, now, vmhostTiming, localEgress, reportEditEveryMs }: AppDeps): Promise<App> {
  const resources = resourcesOf(config.baseUrl);
  const perMinute = (points: number): Policy => ({ points, durationSeconds: 60 });
  const limits = createRateLimits({
    db,
    provider: config.databaseProvider,
    policies: { api: perMinute(config.rateLimits.api), apiIp: perMinute(config.rateLimits.apiAddress), ...policies },
    logger,
  });
  const provider = providerAtFirstUse({ baseUrl: config.baseUrl, secretKey: config.secretKey, db, limits, trustProxy: config.trustProxy });
  const sessions = createSessionService({ db });
  const owners = createOwnerService({ db });
  const access = createAccessService({ db });
  const bearer = createBearerVerifier({ db });
  const authorizer = createAuthorizer({ sessions, bearer, baseUrl: config.baseUrl, apiResource: resources.api });
  const domains = createDomains({ config, db, logger, now, vmhostTiming, localEgress, reportEditEveryMs });
  // Messages are taken from now on; repeating work begins as main.ts adds it.
  await domains.queue.start();
  const handlers = { ...accountHandlers(createAccountService({ db })), ...accessHandlers(access), ...domains.handlers };
  const api = await createApi({ db, contract, authorizer, handlers });
  const tenantDb = (tenantId: string) => forTenant(db, tenantId);
  const mcp = mcpAtFirstUse({ tenantDb, baseUrl: config.baseUrl, allowedOrigins: config.mcpAllowedOrigins, resource: resources.mcp, bearer, api, handlers, jobs: domains.jobs, runs: domains.runs, logger, version: packageVersion });
  const cookieSecret = deriveKey(config.secretKey, 'session cookie').toString('hex');
  const pageDeps = { baseUrl: config.baseUrl, sessions, owners, limits, signupOpen: config.signupOpen };

  const app = express();
  app.disable('x-powered-by');
  // Behind a proxy, only the address it saw is trusted: X-Forwarded-For's earlier entries are the client's to write.
  app.set('trust proxy', config.trustProxy ? 1 : false);
  app.use(requestContext(logger));
  // Webhook senders are machines: their deliveries need no browser headers and carry no cookies.
  app.use(domains.intake);
  const https = config.baseUrl.protocol === 'https:';
  app.use(
    helmet({
      // Over plain http (a local or LAN install) upgrading requests, HSTS and COOP cannot work; browsers
      // would only report the ignored headers as errors.
      // form-action 'self' would also stop the redirect of an approval form to the OAuth client's redirect URI.
      contentSecurityPolicy: { directives: { upgradeInsecureRequests: https ? [] : null, formAction: null } },
      strictTransportSecurity: https,
      crossOriginOpenerPolicy: https,
      // no-referrer would make browsers send `Origin: null` on the service's own form posts.
      referrerPolicy: { policy: 'same-origin' },
    }),
  );
  app.use(cookieParser(cookieSecret));
  app.use(healthRouter(db));
  app.use(metricsRouter(domains.metrics, config.metrics.token));
  app.use(docsRouter(contract));
  app.use('/mcp', noStore, rateLimit(limits, 'apiIp', byAddress), rateLimit(limits, 'api', apiCredential));
  app.use(mcp);
  app.use('/api', noStore, usableRequestLine, rateLimit(limits, 'apiIp', byAddress), rateLimit(limits, 'api', apiCredential), requireJson((req) => api.takesBody(req) || api.documents(req, 415)), jsonBody, oversizedBody(api.documents), api.handle);
  app.use(sessionPages(pageDeps));
  app.use(consolePages({ ...pageDeps, access }));
  app.use(consoleScripts({ '/console/live-run.js': 'src/runs/assets/live-run.js', '/console/copy.js': 'src/webhooks/assets/copy.js' }));
  app.use(
    jobsPages({
      ...pageDeps,
      jobs: domains.jobs,
      tenantDb,
      recentRuns: (tenant, jobId) => domains.runs.list(tenant, { limit: 10 }, { jobId }),
      latestRuns: (tenant, jobIds) => domains.runs.latestOf(tenant, jobIds),
      choices: async (tenant) => ({ targets: await domains.targets.list(tenant, { limit: 100 }), sources: await domains.webhooks.listSources(tenant, { limit: 100 }) }),
      invoke: async (tenant, jobId, data) => invocationOf(await domains.runs.invoke(tenant, jobId, { data })),
      jobBodyProblem: (operationId, body) => api.bodyProblem(operationId, body),
    }),
  );
  app.use(runsPages({ ...pageDeps, runs: domains.runs, jobs: domains.jobs, tenantDb }));
  app.use(webhooksPages({ ...pageDeps, webhooks: domains.webhooks, jobs: domains.jobs, tenantDb, sourceBodyProblem: (body) => api.bodyProblem('createWebhookSource', body), backtestBodyProblem: (body) => api.bodyProblem('backtestJob', body) }));
  app.use(integrationsPages({ ...pageDeps, tenantDb, targets: domains.targets, connections: domains.connections, diagnostics: domains.diagnostics, bodyProblem: (operationId, body) => api.bodyProblem(operationId, body) }));
  app.use(eventsPages({ ...pageDeps, events: domains.events, tenantDb, subscriptionBodyProblem: (body) => api.bodyProblem('createEventSubscription', body) }));
  app.use(interactionPages({ ...pageDeps, db, provider, defaultResource: resources.api }));
  app.use(protectedResourceMetadata(config.baseUrl, resources));
  app.post('/oauth/register', rateLimit(limits, 'registration', byAddress));
  app.post('/oauth/device_authorization', rateLimit(limits, 'deviceAuthorization', byAddress));
  app.use(mountProvider(provider));
  app.use((_req, _res, next) => next(new NotFound('No such endpoint.')));
  app.use(errorHandler);

  return {
    app,
    api,
    sessions,
    cookieSecret,
    get provider() {
      return provider();
    },
    owners,
    changes: domains.changes,
    queue: domains.queue,
    sweeps: domains.sweeps,
    retention: domains.retention,
    jobs: domains.jobs,
    runner: domains.runner,
    scheduler: domains.scheduler,
    events: domains.events,
    webhooks: domains.webhooks,
    metrics: domains.metrics,
    tracing: domains.tracing,
  };
}
