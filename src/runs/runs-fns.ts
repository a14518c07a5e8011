// A run as the API shows it, and the request hash of an invocation.
import type { components } from '../../generated/openapi';
import type { RunState } from './engine/lifecycle';

export type RunView = components['schemas']['Run'];

/** JSON with object keys sorted, so that equal bodies hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

interface RunRow {
  id: string;
  jobId: string;
  invocationId: string | null;
  name: string;
  state: string;
  triggerType: string;
  triggerId: string | null;
  prompt: string;
  result: unknown;
  error: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  replayOf: string | null;
  startKey: string | null;
  attempt: number;
  usage: unknown;
  artifacts: unknown;
}

/** What the cause in a triggered run's start key (`<type>:<trigger>:<cause>`) names, by the trigger's type. */
function causeOf(triggerType: string, startKey: string | null): Partial<RunView['trigger']> {
  const cause = startKey?.split(':').slice(2).join(':');
  if (!cause) return {};
  if (triggerType === 'webhook') return { activityId: cause };
  if (triggerType === 'schedule') return { scheduledFor: cause };
  if (triggerType === 'run') return { runId: cause };
  return {};
}

export function runView(run: RunRow): RunView {
  return {
    id: run.id,
    jobId: run.jobId,
    invocationId: run.invocationId,
    name: run.name,
    state: run.state as RunState,
    trigger: { type: run.triggerType as RunView['trigger']['type'], id: run.triggerId, ...causeOf(run.triggerType, run.startKey) },
    prompt: run.prompt,
    result: (run.result as RunView['result']) ?? null,
    error: run.error,
    createdAt: run.createdAt.toISOString(),
    startedAt: run.startedAt?.toISOString() ?? null,
    finishedAt: run.finishedAt?.toISOString() ?? null,
    replayOf: run.replayOf,
    attempt: run.attempt,
    usage: (run.usage as RunView['usage']) ?? null,
    artifacts: (run.artifacts as RunView['artifacts']) ?? null,
  };
}
