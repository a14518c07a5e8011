// The rules of jobs: create, read, change, enable, disable and delete them, with every template,
// condition, schedule and reference checked before anything is saved; and rendering their templates.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { components } from '../../generated/openapi';
import { isUniqueViolation } from '../db/errors';
import type { TenantDb } from '../db/tenant-scope';
import type { KeysetRequest } from '../http/pagination';
import { agentOf, agentProblem } from '../agents/agents-fns';
import type { JobAgent } from '../agents/agent-events-fns';
import { unusableTarget, type TargetsService } from '../integrations/targets-service';
import { allowListProblem } from '../lib/egress-policy';
import { Conflict, NotFound, ValidationFailed } from '../lib/errors';
import { newId } from '../lib/ids';
import { clip } from '../lib/text';
import type { ValidateFunction } from 'ajv/dist/2020';
import type { SecretsService } from '../secrets/secrets-service';
import { asInvalidTemplate, chainLoop, InvalidConditions, InvalidInvocationData, checkEnv, checkJob, deletedSlug, inputValidator, secretNamesOf, slugCandidate, slugFromName, withIdentity, WORKSPACE_TEMPLATES, type JobEnv, type JobView, type Trigger } from './jobs-fns';
import { CelProblem, compileCel, type CompiledCel } from '../triggers/cel-fns';
import { eventName } from '../triggers/event-patterns-fns';
import { createJobsCatalog, type LiveJobs } from './jobs-catalog';
import { celKey, compileKeys, KEYED_PARTS, mergeFlowControl, runKeys, type CompiledKeys, type Concurrency, type Debounce, type FlowControl, type KeyedPart, type RateLimit } from './flow-control-fns';
import { jobWarnings, RECORDED_DELIVERIES, type RecordedDelivery } from './job-warnings-fns';
import type { SendersService } from '../senders/senders-service';
import type { GithubAppsService } from '../repositories/github-apps-service';
import { createJobsRepo, type JobFields, type JobRow, type JobsRepo } from './jobs-repo';
import { RenderProblem, sharedRenderPool, type RenderPool } from './render-pool';

export { InvalidConditions, InvalidTemplate } from './jobs-fns';
export type { JobRow } from './jobs-repo';

type JobCreate = components['schemas']['JobCreate'];
type JobUpdate = components['schemas']['JobUpdate'];

export interface JobsDeps {
  targets: Pick<TargetsService, 'checkUsable' | 'hasDefault' | 'resolve'>;
  secrets: Pick<SecretsService, 'missing'>;
  /** A workspace's `githubAppId` must name a connection of the tenant. */
  githubApps: Pick<GithubAppsService, 'checkExists'>;
  /** A report's `senderConnectionId` must name a connection of the tenant. */
  senders: Pick<SendersService, 'checkExists'>;
  /** Called after a job is deleted: its queued and active runs are canceled. */
  onDeleted(db: TenantDb, jobId: string): Promise<void>;
  /** Called after a job's concurrency limit changed: queued runs may start in the new slots. */
  onLimitChanged(tenantId: string, jobId: string): void;
  /** Called after any job of the tenant changed: other instances drop what they keep of its jobs. */
  announceChange?(tenantId: string): void;
  /** The live jobs of every tenant with an enabled invocation trigger, the most recently saved first. */
  invocableJobs(): Promise<(JobRow & { tenantId: string })[]>;
  /** Where templates render (worker threads); the process's pool unless a test gives its own. */
  renders?: RenderPool;
}

const jobNotFound = () => new NotFound('No such job.');

type JobNetwork = components['schemas']['JobNetwork'];
type JobWorkspace = components['schemas']['JobWorkspace'];
type JobReport = components['schemas']['JobReport'];

/** The connections a job names exist in its tenant, and reporting has one to report as. */
async function checkRepository({ githubApps, senders, secrets }: Pick<JobsDeps, 'githubApps' | 'senders' | 'secrets'>, db: TenantDb, workspace: JobWorkspace | null | undefined, report: JobReport | null | undefined) {
  if ([workspace?.githubAppId, workspace?.tokenSecret, workspace?.senderConnectionId].filter(Boolean).length > 1) throw new ValidationFailed('`workspace` takes one credential: `githubAppId`, `tokenSecret` or `senderConnectionId`.');
  if (workspace?.tokenSecret && (await secrets.missing(db, [workspace.tokenSecret])).length) {
    throw new ValidationFailed(`\`workspace.tokenSecret\` refers to the secret ${clip(workspace.tokenSecret)}, which this tenant does not have; create it with POST /api/v1/secrets.`);
  }
  await githubApps.checkExists(db, workspace?.githubAppId, 'workspace.githubAppId');
  await githubApps.checkExists(db, report?.githubAppId, 'report.githubAppId');
  await senders.checkExists(db, report?.senderConnectionId, 'report.senderConnectionId');
  await senders.checkExists(db, workspace?.senderConnectionId, 'workspace.senderConnectionId', 'gitlab');
  if (report && !report.githubAppId && !workspace?.githubAppId && !report.senderConnectionId) {
    throw new ValidationFailed('`report` needs somewhere to report as: set `report.githubAppId` (or `workspace.githubAppId`) for GitHub, or `report.senderConnectionId` for Slack, Linear or Jira.');
  }
}

/** The agent's settings must be ones its kind has, and an agent whose events are read needs a target that runs it. */
async function checkAgent(targets: JobsDeps['targets'], db: TenantDb, agent: JobAgent | undefined, targetId: string | null) {
  if (!agent) return;
  const problem = agentProblem(agent);
  if (problem) throw new ValidationFailed(problem);
  if (agent.continue) compiledSessionKey(agent.continue.key);
  if (agent.kind !== 'command' && (await targets.resolve(db, targetId))?.kind === 'vmhost') {
    throw new ValidationFailed(`\`agent.kind\` "${agent.kind}" cannot run on a VM-host target, which runs only its own agent (\`command\`); use the local target or a Docker target.`);
  }
}

const SESSION_KEY = '`agent.continue.key`';

/** The job's session key expression, compiled; refused as a flow-control key is when it does not compile. */
function compiledSessionKey(key: string): CompiledCel {
  try {
    return compileCel(key);
  } catch (err) {
    if (err instanceof CelProblem) throw new InvalidConditions(`${SESSION_KEY} ${err.message}`);
    throw err;
  }
}

/** A job's allowlist names domains, as a target's does. */
function checkNetwork(network: JobNetwork | null | undefined) {
  const problem = network && allowListProblem(network.allow, 'network.allow');
  if (problem) throw new ValidationFailed(problem);
}
const slugTaken = (slug: string) => new Conflict('slug_taken', `Another job of this tenant has the slug "${slug}".`);

export function jobView(job: JobRow): JobView {
  return {
    id: job.id,
    name: job.name,
    slug: job.slug,
    promptTemplate: job.promptTemplate,
    executionTargetId: job.executionTargetId,
    runNameTemplate: job.runNameTemplate,
    concurrencyLimit: job.concurrencyLimit,
    model: job.model,
    effort: job.effort,
    agent: agentOf(job.agent),
    env: (job.env ?? {}) as JobEnv,
    flowControl: (job.flowControl ?? {}) as FlowControl,
    ...(job.network ? { network: job.network as JobNetwork } : {}),
    ...(job.workspace ? { workspace: job.workspace as JobWorkspace } : {}),
    ...(job.report ? { report: job.report as JobReport } : {}),
    enabled: job.enabled,
    triggers: job.triggers.map((row) => ({ id: row.id, enabled: row.enabled, type: row.type, ...(row.config as object) }) as Trigger),
    createdAt: job.createdAt.toISOString(),
    updatedAt: job.updatedAt.toISOString(),
  };
}

/** Webhook sources and watched jobs must exist in the tenant; a watched job named by slug is stored by id. */
async function resolveReferences(repo: JobsRepo, triggers: Trigger[]): Promise<Trigger[]> {
  return Promise.all(
    triggers.map(async (trigger, index) => {
      if (trigger.type === 'webhook' && !(await repo.webhookSourceExists(trigger.sourceId))) {
        throw new ValidationFailed(`\`triggers[${index}].sourceId\` "${clip(trigger.sourceId)}" is not a webhook source of this tenant.`);
      }
      if (trigger.type === 'run') {
        const watched = await repo.find(trigger.jobId);
        if (!watched) throw new ValidationFailed(`\`triggers[${index}].jobId\` "${clip(trigger.jobId)}" is not a job of this tenant.`);
        return { ...trigger, jobId: watched.id };
      }
      return trigger;
    }),
  );
}

/** Every secret `env` refers to must exist in the tenant (a run would fail without it). */
async function checkSecretsExist(secrets: JobsDeps['secrets'], db: TenantDb, env: JobEnv | undefined) {
  const [missing] = await secrets.missing(db, secretNamesOf(env));
  if (missing) {
    const variable = Object.entries(env ?? {}).find(([, value]) => typeof value === 'object' && value.secret === missing)![0];
    throw new ValidationFailed(`\`env.${clip(variable)}\` refers to the secret ${clip(missing)}, which this tenant does not have; create it with POST /api/v1/secrets.`);
  }
}

/** What rendering a job's templates reads of it. */
/** A job's workspace for one run: its templates rendered. */
export type RenderedWorkspace = Omit<JobWorkspace, 'ref' | 'branch' | 'commitMessage' | 'pullRequestTitle'> & { ref: string | null; branch: string | null; commitMessage: string | null; pullRequestTitle: string | null };

export type RenderedJob = Pick<JobRow, 'id' | 'name' | 'updatedAt' | 'promptTemplate' | 'runNameTemplate' | 'flowControl'>;

/** Run triggers must not close a chain back to the job: each run would start the next for ever. */
async function refuseLoops(repo: JobsRepo, jobId: string, triggers: Trigger[]) {
  const watched = triggers.flatMap((trigger) => (trigger.type === 'run' ? [trigger.jobId] : []));
  if (watched.length === 0) return;
  const others = (await repo.runTriggerEdges()).filter((edge) => edge.to !== jobId);
  const loop = chainLoop(others, jobId, watched);
  if (loop) throw new ValidationFailed(`\`triggers\` would chain jobs in a loop: ${loop.map(clip).join(' → ')}.`);
}

/** What direct invocation takes from a job's first enabled invocation trigger. */
interface InvocationInput {
  triggerId: string | null;
  defaultData: Record<string, unknown>;
  validate: ValidateFunction | null;
}

const MAX_RUN_NAME = 500;

/** Values made once per version of a job (its id and `updatedAt`), the last 1,000 versions kept. */
function perVersion<V>() {
  const entries = new Map<string, V>();
  const keyOf = (job: Pick<JobRow, 'id' | 'updatedAt'>) => `${job.id}@${job.updatedAt.getTime()}`;
  const set = (job: Pick<JobRow, 'id' | 'updatedAt'>, value: V) => {
    if (entries.size >= 1000) entries.delete(entries.keys().next().value!);
    entries.set(keyOf(job), value);
    return value;
  };
  return { set, get: (job: Pick<JobRow, 'id' | 'updatedAt'>, make: () => V): V => entries.get(keyOf(job)) ?? set(job, make()) };
}

type InvocationTrigger = Extract<Trigger, { type: 'invocation' }>;

/** The job's first enabled invocation trigger, whose settings apply to direct invocations, with its config. */
function invocationTriggerOf(job: JobRow) {
  const row = job.triggers.find((trigger) => trigger.type === 'invocation' && trigger.enabled);
  return row && { id: row.id, config: row.config as Omit<InvocationTrigger, 'id' | 'type'> };
}

/** The invocation input of a saved job; a stored schema that is refused now is kept as its error (409). */
function invocationInputOf(job: JobRow, validators?: Map<string, ValidateFunction>): InvocationInput | Error {
  const row = invocationTriggerOf(job);
  if (!row) return { triggerId: null, defaultData: {}, validate: null };
  const { inputSchema, defaultData = {} } = row.config;
  try {
    const validate = inputSchema ? (validators?.get(row.id) ?? inputValidator(inputSchema, `The input schema of trigger \`${row.id}\``, 409)) : null;
    return { triggerId: row.id, defaultData, validate };
  } catch (err) {
    return err as Error;
  }
}

/** The keyed parts for a run that is not debounced: a direct invocation. */
const UNDEBOUNCED = ['concurrency', 'rateLimit'] as const;

export function createJobsService({ targets, secrets, githubApps, senders, onDeleted, onLimitChanged, announceChange = () => {}, invocableJobs, renders = sharedRenderPool() }: JobsDeps) {
  const catalog = createJobsCatalog();
  const changed = (db: TenantDb) => {
    catalog.changed(db.$tenant().id);
    announceChange(db.$tenant().id);
  };
  // Input schemas are checked and compiled once per version of a job, not per run: at save, at start
  // (`compileSaved`) or else at the first invocation of a version saved elsewhere. Templates are parsed
  // where they render, in the pool's workers, which keep them parsed.
  const flowKeys = perVersion<CompiledKeys>();
  const sessionKeys = perVersion<CompiledCel>();
  const inputs = perVersion<InvocationInput | Error>();
  const saved = (db: TenantDb, job: JobRow, validators: Map<string, ValidateFunction>) => {
    inputs.set(job, invocationInputOf(job, validators));
    return withWarnings(db, jobView(job));
  };

  /** A job's answer with its warnings: what its paths are read against is read here (see job-warnings-fns). */
  async function withWarnings(db: TenantDb, view: JobView): Promise<JobView> {
    // Naming no target is allowed (the operator may add a default later), but runs fail until there is one.
    const targetWarnings = view.executionTargetId === null && !targets.hasDefault ? [{ field: 'executionTargetId', message: `Runs cannot start: ${unusableTarget(null)}.` }] : [];
    const webhooks = view.triggers.filter((trigger) => trigger.type === 'webhook');
    if (!webhooks.length) return { ...view, warnings: targetWarnings };
    const repo = createJobsRepo(db);
    const [formats, recorded] = await Promise.all([
      repo.sourceFormats([...new Set(webhooks.map((trigger) => trigger.sourceId))]),
      Promise.all(
        webhooks.map(async (trigger): Promise<[string, RecordedDelivery[]]> => {
          // Exact event names are looked up; a pattern takes the source's latest deliveries, filtered after.
          const names = trigger.events.some((event) => event.includes('*')) ? null : trigger.events;
          const rows = await repo.recentDeliveries(trigger.sourceId, names, RECORDED_DELIVERIES);
          return [trigger.id, rows.map((row) => ({ name: eventName(row.event, row.action), context: row.context as Record<string, unknown> }))];
        }),
      ),
    ]);
    return { ...view, warnings: [...targetWarnings, ...jobWarnings(view, formats, new Map(recorded))] };
  }

  const live = (db: TenantDb): Promise<LiveJobs> => catalog.live(db.$tenant().id, () => createJobsRepo(db).live());

  async function freeSlug(repo: JobsRepo, name: string, taken?: string): Promise<string> {
    const base = slugFromName(name);
    const used = await repo.slugsStartingWith(base.slice(0, 20));
    if (taken) used.add(taken);
    for (let attempt = 1; ; attempt++) {
      const candidate = slugCandidate(base, attempt);
      if (!used.has(candidate)) return candidate;
    }
  }

  async function found(repo: JobsRepo, ref: string): Promise<JobRow> {
    const job = await repo.find(ref);
    if (!job) throw jobNotFound();
    return job;
  }

  return {
    async testTemplate(db: TenantDb, input: { template: string; context: Record<string, unknown> }): Promise<{ output: string }> {
      try {
        const [output] = await renders.render(db.$tenant().id, [input.template], input.context);
        return { output };
      } catch (err) {
        throw asInvalidTemplate(err, null);
      }
    },

    /**
     * Triggers as saving them into `job` would take them (compiled, their sources and watched jobs found in
     * the tenant), for a backtest of a draft: nothing is saved.
     */
    async draftTriggers(db: TenantDb, job: Pick<JobRow, 'promptTemplate' | 'runNameTemplate'>, inputs: NonNullable<JobCreate['triggers']>): Promise<Trigger[]> {
      const triggers = withIdentity(inputs);
      checkJob({ promptTemplate: job.promptTemplate, runNameTemplate: job.runNameTemplate, triggers });
      return resolveReferences(createJobsRepo(db), triggers);
    },

    async create(db: TenantDb, input: JobCreate): Promise<JobView> {
      const repo = createJobsRepo(db);
      const { triggers: inputs = [], ...fields } = input;
      let triggers = withIdentity(inputs);
      const validators = checkJob({ ...fields, triggers });
      checkEnv(fields.env);
      checkNetwork(fields.network);
      await checkRepository({ githubApps, senders, secrets }, db, fields.workspace, fields.report);
      await targets.checkUsable(db, fields.executionTargetId);
      await checkAgent(targets, db, fields.agent, fields.executionTargetId ?? null);
      await checkSecretsExist(secrets, db, fields.env);
      triggers = await resolveReferences(repo, triggers);
      let slug = fields.slug ?? (await freeSlug(repo, fields.name));
      // A derived slug taken between the look and the write is derived again; a chosen one is refused.
      for (let attempt = 0; ; attempt++) {
        try {
          const created = await repo.create(newId('job'), { ...fields, slug }, triggers);
          changed(db);
          return saved(db, created, validators);
        } catch (err) {
          if (!isUniqueViolation(err)) throw err;
          if (fields.slug || attempt >= 3) throw slugTaken(slug);
          slug = await freeSlug(repo, fields.name, slug);
        }
      }
    },

    async get(db: TenantDb, ref: string): Promise<JobView> {
      return withWarnings(db, jobView(await found(createJobsRepo(db), ref)));
    },

    async list(db: TenantDb, page: KeysetRequest<string>, filter: { enabled?: boolean }): Promise<JobView[]> {
      return (await createJobsRepo(db).list(page, filter)).map(jobView);
    },

    async update(db: TenantDb, ref: string, patch: JobUpdate): Promise<JobView> {
      const repo = createJobsRepo(db);
      const job = await found(repo, ref);
      const { triggers: inputs, ...fields } = patch;
      let triggers = inputs && withIdentity(inputs);
      const { flowControl: flowPatch, ...columns } = fields;
      const flowControl = flowPatch === undefined ? undefined : mergeFlowControl(jobView(job).flowControl, flowPatch);
      const validators = checkJob(
        {
          promptTemplate: fields.promptTemplate ?? job.promptTemplate,
          runNameTemplate: fields.runNameTemplate === undefined ? job.runNameTemplate : fields.runNameTemplate,
          triggers: triggers ?? jobView(job).triggers,
          flowControl: flowControl ?? jobView(job).flowControl,
          workspace: fields.workspace === undefined ? (job.workspace as JobWorkspace | null) : fields.workspace,
        },
        {
          templates: fields.promptTemplate !== undefined || fields.runNameTemplate !== undefined || Boolean(fields.workspace),
          triggers: triggers !== undefined,
          flowControl: flowControl !== undefined,
        },
      );
      checkEnv(fields.env);
      checkNetwork(fields.network);
      if (fields.workspace !== undefined || fields.report !== undefined) {
        const workspace = fields.workspace === undefined ? (job.workspace as JobWorkspace | null) : fields.workspace;
        await checkRepository({ githubApps, senders, secrets }, db, workspace, fields.report === undefined ? (job.report as JobReport | null) : fields.report);
      }
      await targets.checkUsable(db, fields.executionTargetId);
      // A new target is checked against the agent the job keeps, and a new agent against its target.
      if (fields.agent !== undefined || fields.executionTargetId !== undefined) {
        await checkAgent(targets, db, fields.agent ?? jobView(job).agent, fields.executionTargetId === undefined ? job.executionTargetId : fields.executionTargetId);
      }
      await checkSecretsExist(secrets, db, fields.env);
      if (triggers) {
        triggers = await resolveReferences(repo, triggers);
        await refuseLoops(repo, job.id, triggers);
      }
      let updated: JobRow | null;
      try {
        updated = await repo.update(job.id, { ...columns, ...(flowControl && { flowControl }) } satisfies JobFields, triggers);
      } catch (err) {
        if (isUniqueViolation(err) && fields.slug) throw slugTaken(fields.slug);
        throw err;
      }
      if (!updated) throw jobNotFound();
      changed(db);
      // New slots (a higher limit, a key's limit, or none) may start queued runs.
      if ((fields.concurrencyLimit !== undefined && fields.concurrencyLimit !== job.concurrencyLimit) || flowControl) onLimitChanged(db.$tenant().id, job.id);
      return saved(db, updated, validators);
    },

    /** Idempotent: enabling an enabled job changes nothing, not even `updatedAt`. */
    async setEnabled(db: TenantDb, ref: string, enabled: boolean): Promise<JobView> {
      const repo = createJobsRepo(db);
      const job = await found(repo, ref);
      if (job.enabled === enabled) return withWarnings(db, jobView(job));
      await repo.setEnabled(job.id, enabled);
      changed(db);
      return withWarnings(db, jobView(await found(repo, job.id)));
    },

    async delete(db: TenantDb, ref: string): Promise<void> {
      const repo = createJobsRepo(db);
      const job = await found(repo, ref);
      if (!(await repo.softDelete(job.id, deletedSlug(job.id)))) throw jobNotFound();
      changed(db);
      await onDeleted(db, job.id);
    },

    /** A live job by id or slug, as runs need it. */
    find: (db: TenantDb, ref: string) => createJobsRepo(db).find(ref),

    /**
     * The data of a direct invocation: `given` merged over the invocation trigger's `defaultData` and
     * validated against its `inputSchema` (400 `validation_failed`; 409 `invalid_input_schema` for a schema
     * saved before it was checked, which is refused now).
     */
    invocationData(job: JobRow, given: Record<string, unknown> = {}): { triggerId: string | null; data: Record<string, unknown> } {
      const input = inputs.get(job, () => invocationInputOf(job));
      if (input instanceof Error) throw input;
      const data = { ...input.defaultData, ...given };
      if (input.validate && !input.validate(data)) {
        throw new InvalidInvocationData(input.validate.errors?.[0], input.triggerId);
      }
      return { triggerId: input.triggerId, data };
    },

    /**
     * The tenant's enabled jobs that take invocations, with the input schema their invocation trigger checks
     * (as MCP tools); a job whose saved schema is refused now is left out. At most 1,000, newest first.
     */
    async invocable(db: TenantDb): Promise<{ id: string; slug: string; name: string; description?: string; inputSchema: Record<string, unknown> }[]> {
      const rows = await createJobsRepo(db).list({ limit: 1000 }, { enabled: true });
      return rows.flatMap((job) => {
        const row = invocationTriggerOf(job);
        if (!row || inputs.get(job, () => invocationInputOf(job)) instanceof Error) return [];
        const { inputSchema = {}, description } = row.config;
        return [{ id: job.id, slug: job.slug, name: job.name, ...(description ? { description } : {}), inputSchema }];
      });
    },

    /**
     * Checks and compiles the input schemas of jobs saved before this process started (those the cache
     * holds), so that invocations find them compiled; answers the jobs whose schema is refused now.
     */
    async compileSaved(): Promise<{ tenantId: string; jobId: string; problem: string }[]> {
      const refused = [];
      for (const job of await invocableJobs()) {
        const input = inputs.get(job, () => invocationInputOf(job));
        if (input instanceof Error) refused.push({ tenantId: job.tenantId, jobId: job.id, problem: input.message });
        await nextTurn(); // requests go on meanwhile
      }
      return refused;
    },

    /** What executing runs of a live job needs (by id); null when the job is gone. */
    settings: async (db: TenantDb, id: string) => (await live(db)).find(id),

    /** The tenant's live jobs as the hot paths read them (kept in memory until one changes). */
    live,

    /** Another instance changed a job of the tenant. */
    heardChange: (tenantId: string) => catalog.changed(tenantId),
    /** Changes may have gone unheard. */
    forgetKept: () => catalog.forgetAll(),

    /**
     * The job's keyed flow control (concurrency, rate limit), each with the key a run with `context` (as its
     * templates see it) falls under; null for a part the job does not set. Throws InvalidConditions when a
     * key cannot be worked out (fails closed).
     */
    flowKeys(
      job: RenderedJob,
      context: Record<string, unknown>,
      { debounced = true }: { debounced?: boolean } = {},
    ): { concurrency: (Concurrency & { runKey: string | null }) | null; rateLimit: (RateLimit & { runKey: string | null }) | null; debounce: (Debounce & { runKey: string | null }) | null } {
      const flowControl = (job.flowControl ?? {}) as FlowControl;
      const outcome = runKeys(flowControl, flowKeys.get(job, () => compileKeys(flowControl)), context, debounced ? KEYED_PARTS : UNDEBOUNCED);
      if (!outcome.ok) throw new InvalidConditions(outcome.error);
      const keyed = <P extends KeyedPart>(part: P) =>
        part in outcome.keys ? ({ ...flowControl[part], runKey: outcome.keys[part] } as NonNullable<FlowControl[P]> & { runKey: string | null }) : null;
      return { concurrency: keyed('concurrency'), rateLimit: keyed('rateLimit'), debounce: keyed('debounce') };
    },

    /**
     * The value of the job's `agent.continue.key` for a run with `context` (as its templates see it): the
     * session it continues; null when the job sets none, or an error when the key cannot be worked out.
     */
    sessionKey(job: JobRow, context: Record<string, unknown>): { ok: true; key: string | null } | { ok: false; error: string } {
      const key = (job.agent as JobAgent | null)?.continue?.key;
      if (!key) return { ok: true, key: null };
      return celKey(SESSION_KEY, sessionKeys.get(job, () => compiledSessionKey(key)), context);
    },

    /**
     * The job's flow control, or a draft of it (checked as at save, against `triggers`), with the keys a run
     * with a given context would take: for a backtest, so nothing is kept.
     */
    flowDraft(job: JobRow, triggers: Trigger[], draft: FlowControl | undefined) {
      const flowControl = draft ?? jobView(job).flowControl;
      if (draft) checkJob({ promptTemplate: job.promptTemplate, runNameTemplate: job.runNameTemplate, triggers, flowControl: draft }, { templates: false, triggers: false, flowControl: true });
      const compiled = compileKeys(flowControl);
      return {
        flowControl,
        keysOf(context: Record<string, unknown>): { concurrencyKey: string | null; rateKey: string | null; debounceKey: string | null; keyError?: string } {
          const outcome = runKeys(flowControl, compiled, context);
          if (!outcome.ok) return { concurrencyKey: null, rateKey: null, debounceKey: null, keyError: outcome.error };
          return { concurrencyKey: outcome.keys.concurrency ?? null, rateKey: outcome.keys.rateLimit ?? null, debounceKey: outcome.keys.debounce ?? null };
        },
      };
    },

    /**
     * The job's prompt and run name for `context`; a caller's own prompt or name replaces the template's.
     * Both render in one message to the pool. `background` work (a trigger's start) waits its turn in the
     * tenant's line however long it is; a request is refused (429) when the line is full.
     */
    async render(
      db: TenantDb,
      job: RenderedJob,
      context: Record<string, unknown>,
      given: { prompt?: string; name?: string } = {},
      { background = false }: { background?: boolean } = {},
    ): Promise<{ prompt: string; name: string }> {
      const wanted: { field: string; source: string }[] = [];
      if (given.prompt == null) wanted.push({ field: 'promptTemplate', source: job.promptTemplate });
      if (given.name == null && job.runNameTemplate) wanted.push({ field: 'runNameTemplate', source: job.runNameTemplate });
      let outputs: string[];
      try {
        outputs = await renders.render(db.$tenant().id, wanted.map(({ source }) => source), context, { background });
      } catch (err) {
        throw asInvalidTemplate(err, err instanceof RenderProblem ? wanted[err.index].field : null);
      }
      const rendered = Object.fromEntries(wanted.map(({ field }, i) => [field, outputs[i]]));
      const prompt = given.prompt ?? rendered.promptTemplate;
      const name = given.name ?? (rendered.runNameTemplate?.trim() || '');
      return { prompt, name: (name || job.name).slice(0, MAX_RUN_NAME) };
    },

    /**
     * The job's workspace for a run with `context`: its templates rendered (blank ones as null); null for a
     * job without one. A template that fails throws, saying which.
     */
    async renderWorkspace(db: TenantDb, job: JobRow, context: Record<string, unknown>): Promise<RenderedWorkspace | null> {
      const workspace = job.workspace as JobWorkspace | null;
      if (!workspace) return null;
      const fields = WORKSPACE_TEMPLATES.filter((field) => workspace[field]);
      let outputs: string[];
      try {
        outputs = await renders.render(db.$tenant().id, fields.map((field) => workspace[field]!), context, { background: true });
      } catch (err) {
        throw asInvalidTemplate(err, err instanceof RenderProblem ? `workspace.${fields[err.index]}` : null);
      }
      const value = (field: (typeof WORKSPACE_TEMPLATES)[number]) => outputs[fields.indexOf(field)]?.trim() || null;
      return { ...workspace, repository: value('repository') ?? '', ref: value('ref'), branch: value('branch'), commitMessage: value('commitMessage'), pullRequestTitle: value('pullRequestTitle') };
    },
  };
}

export type JobsService = ReturnType<typeof createJobsService>;
