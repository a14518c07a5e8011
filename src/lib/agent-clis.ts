// The agent CLIs whose event streams Flows reads, by the kind a job names, with the name each has on PATH.
// Shared by the configuration (where an operator may say where one is) and the executors that run them.

export const AGENT_CLIS = { 'claude-code': 'claude', codex: 'codex', gemini: 'gemini', opencode: 'opencode', cursor: 'cursor-agent' } as const;

/** A kind of agent whose stream is read; `command`, the target's own command, is the other. */
export type StreamKind = keyof typeof AGENT_CLIS;

export const STREAM_KINDS = Object.keys(AGENT_CLIS) as StreamKind[];

/** The variable that says where a kind's CLI is on this machine: FLOWS_AGENT_BIN_CLAUDE_CODE, …_CODEX. */
export const agentBinVariable = (kind: StreamKind) => `FLOWS_AGENT_BIN_${kind.toUpperCase().replace(/-/g, '_')}`;

export const isStreamKind = (kind: string): kind is StreamKind => Object.hasOwn(AGENT_CLIS, kind);
