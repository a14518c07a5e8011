// The SDK's surface: what `createFlows` answers and takes. Kept apart from the implementation so that
// a reader (or a CLI written against it) sees the whole API in one place.
import type { Client } from 'openapi-fetch';
import type { RefreshOptions } from './auth';
import type { paths } from './generated/openapi';
import type {
  ConditionDecision,
  ConditionTestRequest,
  Invocation,
  InvocationRequest,
  Job,
  JobCreate,
  JobUpdate,
  Me,
  Run,
  RunState,
  TemplateTestRequest,
  TemplateTestResult,
  TraceEvent,
  UsageSummary,
  Budget,
  WebhookActivity,
  WebhookRefusal,
  WebhookSource,
  WebhookSourceCreate,
  WebhookSourceWithSecret,
} from './types';

export interface FlowsOptions {
  /** The server's origin, e.g. `http://localhost:3000`; the operations' paths carry `/api/v1`. */
  baseUrl: string;
  /** A fixed access token. */
  accessToken?: string;
  /** Or tokens that renew themselves through the server's OAuth token endpoint; these win when both are given. */
  refresh?: RefreshOptions;
  /** The fetch to send requests with; the global one by default. */
  fetch?: typeof fetch;
}

export interface WaitOptions {
  /** Pause between polls; 1000 ms by default. */
  intervalMs?: number;
  /** Give up after this long, with a `TimeoutError`; no limit by default. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface FollowOptions {
  /** Pause between polls when nothing new has come; 1000 ms by default. */
  intervalMs?: number;
  signal?: AbortSignal;
}

/**
 * Every method throws `FlowsApiError` for a non-2xx answer or when the server cannot be reached. Lists
 * are async iterables that read the next page only when the current one has been consumed.
 */
export interface Flows {
  /** The underlying openapi-fetch client, with the same authentication, for operations not wrapped here. */
  client: Client<paths>;
  me(): Promise<Me>;
  jobs: {
    list(query?: { enabled?: boolean; limit?: number }): AsyncIterable<Job>;
    /** By id or slug, like every `ref` here. */
    get(ref: string): Promise<Job>;
    create(body: JobCreate): Promise<Job>;
    update(ref: string, patch: JobUpdate): Promise<Job>;
    delete(ref: string): Promise<void>;
    enable(ref: string): Promise<Job>;
    disable(ref: string): Promise<Job>;
    /** A repeat with the same `idempotencyKey` and body answers the first invocation with `duplicate: true`. */
    invoke(ref: string, body?: InvocationRequest): Promise<Invocation>;
  };
  runs: {
    list(query?: { jobId?: string; state?: RunState; limit?: number }): AsyncIterable<Run>;
    get(id: string): Promise<Run>;
    /** Asks the run to stop; it answers in `canceling`. */
    stop(id: string): Promise<Run>;
    /** The whole trace as it is now, in `seq` order. */
    trace(id: string): AsyncIterable<TraceEvent>;
    /** Polls until the run is terminal (succeeded, failed, timed_out, canceled, expired) and answers it. */
    waitFor(id: string, options?: WaitOptions): Promise<Run>;
    /** The trace as it grows, each event once, in `seq` order; ends when the run is terminal and all is read. */
    follow(id: string, options?: FollowOptions): AsyncIterable<TraceEvent>;
  };
  /**
   * What the runs created in `[since, until)` spent (30 days before now by default), in total and per job
   * (the costliest first) or per UTC day; only runs with usage count, those of unknown cost in `unknownCostRuns`.
   */
  usage(query?: { since?: string; until?: string; groupBy?: UsageSummary['groupBy'] }): Promise<UsageSummary>;
  budget: {
    /** The monthly budget in force and what this month (UTC) has spent of it; once spent, no new run starts. */
    get(): Promise<Budget>;
    /** Sets the tenant's own monthly budget in US dollars; null goes back to the operator's default. */
    set(monthlyUsd: number | null): Promise<Budget>;
  };
  conditions: {
    test(body: ConditionTestRequest): Promise<ConditionDecision>;
  };
  templates: {
    test(body: TemplateTestRequest): Promise<TemplateTestResult>;
  };
  activity: {
    list(query?: { sourceId?: string; limit?: number }): AsyncIterable<WebhookActivity>;
    get(id: string): Promise<WebhookActivity>;
  };
  sources: {
    /** Every source (all pages). */
    list(): Promise<WebhookSource[]>;
    /** The answer holds the signing secret, shown only here. */
    create(body: WebhookSourceCreate): Promise<WebhookSourceWithSecret>;
    /** Replaces the signing secret: a new one made by Flows; or, for a sender that makes its own (Slack, Sentry), `signingSecret` stored in its place. */
    rotate(id: string, signingSecret?: string): Promise<WebhookSourceWithSecret>;
    /** The deliveries intake refused lately for the source, newest first, each with why and what to check. */
    refusals(id: string, query?: { limit?: number }): AsyncIterable<WebhookRefusal>;
  };
}
