// Slack's Web API on loopback, as a bot token meets it: the calls reporting makes (`auth.test`,
// `reactions.add`, `chat.postMessage`, `chat.update`), each refused with `invalid_auth` unless the bearer
// token is the bot's, and recorded: the reactions, and every message with every text it had.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SlackMessage {
  channel: string;
  ts: string;
  threadTs: string | null;
  /** Every text the message had, the first one first. */
  texts: string[];
}

export interface FakeSlack {
  /** The API base URL (a sender connection's `apiBaseUrl`). */
  url: string;
  token: string;
  reactions: { channel: string; ts: string; name: string }[];
  messages: SlackMessage[];
  /** Every call, with the method and whether the token was the bot's. */
  calls: { method: string; authorized: boolean }[];
  close(): Promise<void>;
}

const bodyOf = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, string>;
};

export async function startFakeSlack(token = 'xoxb-1111-2222-fakeslackbot'): Promise<FakeSlack> {
  const reactions: FakeSlack['reactions'] = [];
  const messages: SlackMessage[] = [];
  const calls: FakeSlack['calls'] = [];
  let next = 1_764_400_000;
  const server = createServer(async (req, res) => {
    const method = (req.url ?? '').replace(/^\/api\//, '');
    const body = await bodyOf(req);
    const authorized = req.headers.authorization === `Bearer ${token}`;
    calls.push({ method, authorized });
    const answer = (data: Record<string, unknown>) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(data));
    if (!authorized) return answer({ ok: false, error: 'invalid_auth' });
    switch (method) {
      case 'auth.test':
        return answer({ ok: true, user: 'flows', team: 'Acme', user_id: 'U0FLOWSBOT' });
      case 'reactions.add':
        reactions.push({ channel: body.channel, ts: body.timestamp, name: body.name });
        return answer({ ok: true });
      case 'chat.postMessage': {
        const ts = `${next++}.000100`;
        messages.push({ channel: body.channel, ts, threadTs: body.thread_ts ?? null, texts: [body.text] });
        return answer({ ok: true, channel: body.channel, ts });
      }
      case 'chat.update': {
        const message = messages.find((candidate) => candidate.channel === body.channel && candidate.ts === body.ts);
        if (!message) return answer({ ok: false, error: 'message_not_found' });
        message.texts.push(body.text);
        return answer({ ok: true, channel: body.channel, ts: body.ts });
      }
      default:
        return answer({ ok: false, error: 'unknown_method' });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/api`, token, reactions, messages, calls, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
