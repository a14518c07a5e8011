// The Slack Web API calls reporting needs, as a bot token speaks them: who the token is (`auth.test`), a
// reaction, a message in a thread, and that message edited. Every call goes through the outbound guard,
// like every URL a tenant gives; Slack answers 200 with `ok: false` and an error code when it refuses.
import type { Outbound } from '../lib/outbound';
import { clip } from '../lib/text';
import { SenderFailure } from './sender-failure';

const CALL_TIMEOUT_MS = 30_000;
export const SLACK_API = 'https://slack.com/api';


export function createSlackApi(outbound: Pick<Outbound, 'fetch'>, apiBaseUrl: string, token: string) {
  async function call<T extends Record<string, unknown>>(what: string, method: string, body: Record<string, unknown>): Promise<T> {
    let answer: Record<string, unknown>;
    try {
      const res = await outbound.fetch(`${apiBaseUrl.replace(/\/+$/, '')}/${method}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
      if (!res.ok) throw new SenderFailure(`${what}: Slack answered ${res.status}`);
      answer = (await res.json()) as Record<string, unknown>;
    } catch (err) {
      if (err instanceof SenderFailure) throw err;
      throw new SenderFailure(`${what}: Slack could not be reached (${clip((err as Error).message)})`);
    }
    if (answer.ok !== true) throw new SenderFailure(`${what}: Slack answered \`${clip(String(answer.error ?? 'not ok'))}\``);
    return answer as T;
  }

  return {
    /** The bot and workspace the token speaks for. */
    whoAmI: () => call<{ user?: string; team?: string }>('Slack did not accept the token', 'auth.test', {}).then((answer) => ({ user: answer.user ?? '?', team: answer.team ?? '?' })),
    react: (channel: string, ts: string, name: string) => call('Reacting failed', 'reactions.add', { channel, timestamp: ts, name }),
    /** A message in `channel`, in the thread of `threadTs` when given; its `ts` names it for edits. */
    post: (channel: string, threadTs: string | null, text: string) => call<{ ts: string }>('Replying failed', 'chat.postMessage', { channel, text, unfurl_links: false, ...(threadTs && { thread_ts: threadTs }) }).then((answer) => ({ ts: answer.ts })),
    edit: (channel: string, ts: string, text: string) => call('Editing the reply failed', 'chat.update', { channel, ts, text }),
  };
}

export type SlackApi = ReturnType<typeof createSlackApi>;
