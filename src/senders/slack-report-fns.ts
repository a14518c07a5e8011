// Where a Slack delivery asked for the work (the channel, the message and its thread), and the progress
// reply in Slack's markup: what reporting on Slack needs without the network.
import { progressParts, type Progress } from '../lib/progress';

export interface SlackTarget {
  channel: string;
  /** The message that asked (an app mention, a message); null for a slash command, which has none. */
  ts: string | null;
  /** The thread the reply goes in: the asking message's thread, or the message itself; null for a slash command. */
  threadTs: string | null;
}

type Json = Record<string, unknown>;
const objectAt = (value: unknown): Json | null => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : null);
const textAt = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null);

/** Where a run's Slack delivery asked for the work; null for a run something else started. */
export function slackTargetOf(context: Json): SlackTarget | null {
  if (objectAt(context.source)?.format !== 'slack') return null;
  const payload = objectAt(context.payload) ?? {};
  const event = objectAt(payload.event);
  if (event) {
    const channel = textAt(event.channel);
    const ts = textAt(event.ts);
    return channel && ts ? { channel, ts, threadTs: textAt(event.thread_ts) ?? ts } : null;
  }
  const channel = textAt(payload.channel_id);
  return channel ? { channel, ts: null, threadTs: null } : null;
}

/** Text as Slack shows it literally: its three control characters escaped. */
const escaped = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The progress reply in Slack's mrkdwn: the run's name, where it stands, its steps, and at the end its result. */
export function slackProgress(progress: Progress): string {
  const parts = progressParts(progress);
  const lines = [`*Flows: ${escaped(progress.runName)}*`, `*${parts.state}*${parts.timing} · <${progress.runUrl}|view the run>`];
  for (const step of parts.steps) lines.push(`• ${escaped(step)}`);
  if (parts.summary) lines.push('', escaped(parts.summary));
  if (parts.error) lines.push('', `> ${escaped(parts.error).replace(/\n/g, '\n> ')}`);
  if (parts.facts.length) lines.push('', ...parts.facts.map((fact) => `• ${escaped(fact)}`));
  return lines.join('\n').trim();
}
