// The port every way of executing a run implements (the local agent command here; VM hosts behind the
// same port): start an agent on a rendered prompt, report its output, end in an outcome, stop on request,
// and find what a previous process left behind after a crash.

import type { JobAgent } from '../agents/agent-events-fns';
import type { ProviderRepository } from '../lib/provider-repository';

export interface RunSpec {
  tenantId: string;
  targetId: string;
  runId: string;
  jobSlug: string;
  prompt: string;
  model: string | null;
  effort: string | null;
  /** The coding agent the job names; absent, or `command`: the target's own command. */
  agent?: JobAgent;
  timeoutSeconds: number;
  /** Variables the job gives the agent (its `env`, secrets opened): never logged, masked in the trace. */
  env: Record<string, string>;
  /**
   * The agent session of a run whose agent's events are read: the key of the state kept for it between runs
   * (`sess_…`: a hash, safe as a file name), the job whose runs keep it, and the CLI's id of the session to
   * continue (null: a new one).
   */
  session?: { key: string; jobId: string; resume: string | null } | null;
  /** The job's own network allowlist, within the target's policy; null when it sets none. */
  network?: { allow: string[] } | null;
  /**
   * The repository workspace prepared for the run: a folder on this server that the agent works in instead
   * of an empty one (only for executors that take one, `takesWorkspace`); what it leaves there is read back.
   */
  workspace?: {
    dir: string;
    /** The repository's name: where a container holds it (`/workspace/<name>`). */
    name: string;
    /** What the agent may leave there, at most (a container's workspace comes back as an archive). */
    maxBytes: number;
  } | null;
  /**
   * The repository for executors whose provider clones it itself (`clonesRepository`), and pushes the
   * branch when the agent changed anything.
   */
  repository?: ProviderRepository | null;
}

/**
 * Why a run failed, as a retry tells them apart: the agent itself (`agent`), what runs it (`infrastructure`:
 * a provider's error, a lost VM or container, a command that could not start), a run that cannot be
 * set up as it stands (`setup`: a target or image gone or refused), or a limit of its sandbox that the
 * agent ran into (`resource_limit`: the error says which); trying again mends neither of the last two.
 */
export type FailureCause = 'agent' | 'infrastructure' | 'setup' | 'resource_limit';

export type Outcome =
  | { state: 'succeeded'; result: Record<string, unknown> }
  | { state: 'failed'; error: string; cause: FailureCause }
  | { state: 'timed_out' | 'canceled'; error: string };

export interface ExecutionEvents {
  /** A line of the agent's output. */
  output(stream: 'stdout' | 'stderr', text: string): void;
  /** Progress of preparing the target (process started, VM booted, …). */
  provisioning(data: Record<string, unknown>): void;
  /** What the sandbox refused the agent: a connection (`network_denied`), or a limit it ran into (`resource_limit`). */
  sandbox(type: 'network_denied' | 'resource_limit', data: Record<string, unknown>): void;
}

export interface Execution {
  /** Where the execution lives (a process group, a VM), kept on the run to reap it after a crash. */
  ref: string;
  done: Promise<Outcome>;
  /** Ends the execution; `done` then settles as `canceled`. */
  stop(): void;
}

/** The variables every agent gets about its run, whatever executes it; they win over the job's `env`. */
export const runVariables = (spec: Pick<RunSpec, 'runId' | 'jobSlug' | 'model' | 'effort'>) => ({
  FLOWS_RUN_ID: spec.runId,
  FLOWS_JOB_SLUG: spec.jobSlug,
  FLOWS_MODEL: spec.model ?? '',
  FLOWS_EFFORT: spec.effort ?? '',
});

/** An execution that never began: `done` is the failure that says why. */
export const failedAtStart = (kind: string, error: string, cause: FailureCause): Execution => ({ ref: `${kind}:none`, done: Promise.resolve({ state: 'failed', error, cause }), stop: () => {} });

export interface Executor {
  start(spec: RunSpec, events: ExecutionEvents): Promise<Execution>;
  /** Ends whatever `ref` names if it still belongs to the run (after a crash of the process that started it). */
  reap(ref: string, runId: string): Promise<void>;
  /**
   * Removes what runs left behind that no ref names (a crash between creating and recording it), for the
   * runs `isOver` says are over; answers how many. Executors whose leftovers all have refs have none.
   */
  sweep?(isOver: (tenantId: string, runId: string) => Promise<boolean>): Promise<number>;
  /** The agent state kept for sessions between runs; executors that keep none have none. */
  sessionStates?: SessionStates;
  /** Whether it gives the agent a repository workspace from this server (`RunSpec.workspace`). */
  takesWorkspace?: boolean;
  /** Whether its provider clones the repository and pushes the branch itself (`RunSpec.repository`). */
  clonesRepository?: boolean;
}

/** Whose runs a session's kept state serves: it goes once retention has left none of them. */
export interface StateOwner {
  key: string;
  tenantId: string;
  jobId: string;
}

export interface SessionStates {
  /** Whether the state kept under `key` is still there. */
  has(key: string): Promise<boolean>;
  /**
   * Removes the kept states that no run uses any more, as `used` answers from the runs (a state with no
   * owner recorded is used by none), sparing those in use or made within STATE_GRACE_MS; answers how many.
   */
  sweep(used: (owner: StateOwner) => Promise<boolean>): Promise<number>;
}

/** Where an agent sees its session's kept state in a sandbox or a container: the same place every run. */
export const STATE_MOUNT = '/agent-state';

/** A state this young is never swept: its run may not have recorded its session yet. */
export const STATE_GRACE_MS = 3_600_000;
