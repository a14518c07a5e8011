// The agent a job runs, in the console: its kind and settings on the job's page, and the new-job form's
// fields for it, read into the `agent` the API takes.
import type { components } from '../../generated/openapi';
import { html, type Html } from '../http/html';
import { STREAM_KINDS } from '../lib/agent-clis';
import { dollars } from '../pages/console-layout';

type JobAgent = components['schemas']['JobAgent'];
type AgentKind = components['schemas']['AgentKind'];

const KIND_NAMES: Record<AgentKind, string> = {
  command: 'The target\u2019s own command',
  'claude-code': 'Claude Code',
  codex: 'Codex',
  gemini: 'Gemini CLI',
  opencode: 'opencode',
  cursor: 'Cursor',
};

/** The kinds the new-job form offers, the target's own command first (what a job runs when it names none). */
export const AGENT_CHOICES = (['command', ...STREAM_KINDS] as AgentKind[]).map((kind) => ({ value: kind, label: KIND_NAMES[kind] }));

/** The names of the new-job form's agent fields, by the setting a refusal names (`agent.maxTurns`). */
export const AGENT_FIELDS: Record<string, string> = { agent: 'agentKind', 'agent.kind': 'agentKind', 'agent.maxTurns': 'maxTurns', 'agent.maxCostUsd': 'maxCostUsd' };

const toolList = (tools: string[]) => html`${tools.map((tool, i) => html`${i ? ', ' : ''}<code>${tool}</code>`)}`;

/** A job's agent and its settings, in a line. */
export function agentText(agent: JobAgent): Html {
  if (agent.kind === 'command') return html`<code>command</code> (the target\u2019s own command)`;
  const limits = [agent.maxTurns === undefined ? null : `${agent.maxTurns} turns`, agent.maxCostUsd === undefined ? null : dollars(agent.maxCostUsd)].filter(Boolean);
  return html`<code>${agent.kind}</code> (${KIND_NAMES[agent.kind]})${limits.length ? `; at most ${limits.join(' and ')} a run` : '; no turn or cost limit'}; ${
    agent.permissionMode === 'read-only' ? 'read-only: it reads and answers, changes nothing' : 'acts without asking, inside its sandbox'
  }${agent.allowedTools?.length ? html`; allowed tools: ${toolList(agent.allowedTools)}` : null}${agent.disallowedTools?.length ? html`; disallowed tools: ${toolList(agent.disallowedTools)}` : null}`;
}

/**
 * The `agent` of the new-job form's fields, or undefined when it names none. A limit that is not a number is
 * sent as written, for the schema to refuse beside its field.
 */
export function agentOfForm(given: (name: string) => string | undefined): Record<string, unknown> | undefined {
  const number = (name: string) => {
    const text = given(name);
    return text === undefined || !Number.isFinite(Number(text)) ? text : Number(text);
  };
  const [kind, maxTurns, maxCostUsd] = [given('agentKind'), number('maxTurns'), number('maxCostUsd')];
  if (kind === undefined && maxTurns === undefined && maxCostUsd === undefined) return undefined;
  return { kind: kind ?? 'command', maxTurns, maxCostUsd };
}
