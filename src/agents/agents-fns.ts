// The agent a job runs: which settings each kind's CLI has, the command line Flows builds for it (headless,
// JSON events, acting without asking inside the sandbox unless told otherwise, the prompt on stdin), the
// reader of its stream, and what a run's outcome is once the stream has been read.
import { AGENT_CLIS, isStreamKind } from '../lib/agent-clis';
import type { JobAgent, Spent, StreamKind, StreamReader } from './agent-events-fns';
import { claudeCodeReader } from './claude-code-stream-fns';
import { codexReader } from './codex-stream-fns';
import { cursorReader } from './cursor-stream-fns';
import { geminiReader } from './gemini-stream-fns';
import { opencodeReader } from './opencode-stream-fns';

export const DEFAULT_AGENT: JobAgent = { kind: 'command' };

/** A job's agent as stored: a job saved without one runs the target's own command. */
export const agentOf = (stored: unknown): JobAgent => (stored ?? DEFAULT_AGENT) as JobAgent;

const READERS: Record<StreamKind, () => StreamReader> = { 'claude-code': claudeCodeReader, codex: codexReader, gemini: geminiReader, opencode: opencodeReader, cursor: cursorReader };

export const streamReader = (kind: StreamKind): StreamReader => READERS[kind]();

/** How an operator installs each kind's CLI, for the error of a run that cannot find it. */
export const AGENT_INSTALL: Record<StreamKind, string> = {
  'claude-code': 'npm install -g @anthropic-ai/claude-code',
  codex: 'npm install -g @openai/codex',
  gemini: 'npm install -g @google/gemini-cli',
  opencode: 'npm install -g opencode-ai',
  cursor: 'curl https://cursor.com/install -fsS | bash',
};

/** The kinds whose CLI has each setting that only some have. */
const SETTING_KINDS: Partial<Record<keyof JobAgent, StreamKind[]>> = {
  allowedTools: ['claude-code', 'gemini'],
  disallowedTools: ['claude-code'],
};
const STREAM_SETTINGS = ['maxTurns', 'maxCostUsd', 'permissionMode', 'allowedTools', 'disallowedTools', 'continue'] as const;

/** Why a job's agent settings cannot be saved: a setting its kind lacks. */
export function agentProblem(agent: JobAgent): string | null {
  for (const setting of STREAM_SETTINGS) {
    if (agent[setting] === undefined) continue;
    if (!isStreamKind(agent.kind)) return `\`agent.${setting}\` is for agents whose events Flows reads, not \`command\` (the target's own command).`;
    const kinds = SETTING_KINDS[setting];
    if (kinds && !kinds.includes(agent.kind)) return `\`agent.${setting}\` is not a setting of \`${agent.kind}\`; only ${kinds.map((kind) => `\`${kind}\``).join(' and ')} ${kinds.length > 1 ? 'have' : 'has'} it.`;
  }
  return null;
}

/** `value` as one word of a POSIX shell command line. */
export const shellWord = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

/** What the command line is built from besides the agent settings. */
export interface AgentCall {
  /** The CLI's path, or its name on `PATH`. */
  bin: string;
  model: string | null;
  effort: string | null;
  /** The CLI's id of the session to continue; null starts a new one. */
  resume?: string | null;
}

const flag = (name: string, value: string | number | null | undefined) => (value === null || value === undefined ? [] : [name, String(value)]);

/**
 * The command line of an agent's CLI, for /bin/sh, with the prompt on stdin; CLIs that take the prompt
 * only as an argument get it read from stdin by the shell (`"$(cat)"`).
 */
export function agentCommandLine(agent: JobAgent & { kind: StreamKind }, { bin, model, effort, resume = null }: AgentCall): string {
  const act = agent.permissionMode !== 'read-only';
  let args: string[];
  let promptArgument = false;
  switch (agent.kind) {
    case 'claude-code':
      args = [
        '-p',
        '--output-format',
        'stream-json',
        '--verbose',
        '--permission-mode',
        act ? 'bypassPermissions' : 'plan',
        ...flag('--model', model),
        ...flag('--effort', effort),
        ...flag('--max-turns', agent.maxTurns),
        ...flag('--max-budget-usd', agent.maxCostUsd),
        ...(agent.allowedTools?.length ? ['--allowedTools', ...agent.allowedTools] : []),
        ...(agent.disallowedTools?.length ? ['--disallowedTools', ...agent.disallowedTools] : []),
        // The `=` form: a session id never reads as the prompt.
        ...(resume ? [`--resume=${resume}`] : []),
      ];
      break;
    case 'codex':
      // No plugins (fetched from GitHub) and no analytics: nothing leaves the sandbox but the model's calls.
      args = [
        'exec',
        '--json',
        '--skip-git-repo-check',
        '--disable',
        'plugins',
        '-c',
        'analytics.enabled=false',
        // As configuration, not `--sandbox`, which `exec resume` does not take.
        '-c',
        `sandbox_mode=${JSON.stringify(act ? 'danger-full-access' : 'read-only')}`,
        ...flag('--model', model),
        ...(effort ? ['-c', `model_reasoning_effort=${JSON.stringify(effort)}`] : []),
        ...(resume ? ['resume', resume] : []),
        '-',
      ];
      break;
    case 'gemini':
      args = [
        '--output-format',
        'stream-json',
        '--approval-mode',
        act ? 'yolo' : 'plan',
        '--skip-trust',
        ...flag('--model', model),
        ...flag('--resume', resume),
        ...(agent.allowedTools?.length ? ['--allowed-tools', ...agent.allowedTools] : []),
      ];
      break;
    case 'opencode':
      args = ['run', '--format', 'json', ...(act ? ['--auto'] : []), ...flag('--model', model), ...flag('--session', resume)];
      promptArgument = true;
      break;
    case 'cursor':
      args = ['-p', '--output-format', 'stream-json', '--trust', ...(act ? ['--force'] : []), ...flag('--model', model), ...flag('--resume', resume)];
      promptArgument = true;
      break;
  }
  return `exec ${[bin, ...args].map(shellWord).join(' ')}${promptArgument ? ' "$(cat)"' : ''}`;
}

/** Variables every run of the kind gets: no update checks or other calls home from inside the sandbox. */
export function agentVariables(kind: StreamKind): Record<string, string> {
  if (kind === 'claude-code') return { DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', IS_SANDBOX: '1' };
  if (kind === 'gemini') return { GEMINI_CLI_NO_RELAUNCH: 'true' };
  return {};
}

/**
 * Where each kind keeps its sessions, pointed into `dir`, the run's kept state (the same for every run of a
 * session): Claude Code's config folder, Codex's home, Gemini's home, opencode's XDG folders, Cursor's HOME.
 */
export function agentStateVariables(kind: StreamKind, dir: string): Record<string, string> {
  switch (kind) {
    case 'claude-code':
      return { CLAUDE_CONFIG_DIR: `${dir}/claude` };
    case 'codex':
      return { CODEX_HOME: `${dir}/codex` };
    case 'gemini':
      return { GEMINI_CLI_HOME: dir };
    case 'opencode':
      return { XDG_DATA_HOME: `${dir}/data`, XDG_CONFIG_HOME: `${dir}/config`, XDG_STATE_HOME: `${dir}/state` };
    case 'cursor':
      return { HOME: dir };
  }
}

/** The folders `agentStateVariables` names, made before the agent starts (Codex refuses a CODEX_HOME that is not there). */
export const agentStateFolders = (kind: StreamKind, dir: string) => Object.values(agentStateVariables(kind, dir)).filter((folder) => folder !== dir);

/** The kinds whose CLI reports a resumed session's token totals, its earlier runs' included (Codex's `turn.completed`). */
export const SESSION_TOTALS: StreamKind[] = ['codex'];

/** The kinds whose CLI reports what a run cost; the others' cost comes from the operator's prices. */
const REPORTS_COST: StreamKind[] = ['claude-code', 'opencode'];

/** Why `agent.maxCostUsd` cannot be held for a run (its cost would be unknown), or null. */
export function unheldCostBudget(agent: JobAgent & { kind: StreamKind }, model: string | null, priced: (model: string) => boolean): string | null {
  if (agent.maxCostUsd === undefined || REPORTS_COST.includes(agent.kind) || (model && priced(model))) return null;
  const why = model ? `FLOWS_MODEL_PRICES has no price for the model "${model}"` : 'the job names no `model` to price';
  return `\`agent.maxCostUsd\` cannot be held: ${agent.kind} reports no cost and ${why}, so this run's cost would be unknown.`;
}

/** The budget a run's spending crossed, said as its error; null while within them. */
export function budgetCrossed(agent: JobAgent, spent: Pick<Spent, 'turns' | 'costUsd'>): string | null {
  if (agent.maxTurns !== undefined && spent.turns > agent.maxTurns) return `budget_exceeded: the agent took ${spent.turns} turns, over its budget of ${agent.maxTurns} (agent.maxTurns).`;
  if (agent.maxCostUsd !== undefined && spent.costUsd !== null && spent.costUsd > agent.maxCostUsd) {
    return `budget_exceeded: the agent spent $${spent.costUsd.toFixed(4)}, over its budget of $${agent.maxCostUsd} (agent.maxCostUsd).`;
  }
  return null;
}

export { AGENT_CLIS, isStreamKind };
