// What a sandboxed run may use, as the operator sets it, and the words a run's error gives each limit.
// Enforced by the executors (run-limits.ts, sandbox.ts, agent-output.ts).

export interface ResourceLimits {
  /** Processes (and threads) at once. */
  pids: number;
  memoryMb: number;
  /** CPU time over the whole run. */
  cpuSeconds: number;
  workspaceMb: number;
  tmpMb: number;
  /** Output of each stream (stdout, stderr) beyond which the agent is stopped. */
  outputMb: number;
}

export const DEFAULT_LIMITS: ResourceLimits = { pids: 512, memoryMb: 4096, cpuSeconds: 3600, workspaceMb: 2048, tmpMb: 512, outputMb: 64 };

export type LimitName = 'processes' | 'memory' | 'cpu' | 'workspace' | 'tmp' | 'output';

/** The words of a run's error for each limit, with its value. */
export function limitMessage(limit: LimitName, limits: ResourceLimits): string {
  const what: Record<LimitName, string> = {
    processes: `its process limit (${limits.pids} processes)`,
    memory: `its memory limit (${limits.memoryMb} MB)`,
    cpu: `its CPU time limit (${limits.cpuSeconds} seconds)`,
    workspace: `the size of its workspace (${limits.workspaceMb} MB)`,
    tmp: `the size of its /tmp (${limits.tmpMb} MB)`,
    output: `its output limit (${limits.outputMb} MB a stream)`,
  };
  return `The agent reached ${what[limit]}.`;
}
