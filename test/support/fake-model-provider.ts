// A scripted model provider on loopback for the real coding-agent CLIs: it speaks the Anthropic Messages API
// (Claude Code) and the OpenAI Responses API (Codex), streaming as they ask, and answers what a script says:
// text, a shell command or a file to write. Every request is kept, so that a test can see what a CLI sent,
// such as the earlier turns of a resumed conversation.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export type Answer = { text: string } | { shell: string } | { write: { path: string; content: string } };

export interface Turn {
  api: 'anthropic' | 'openai';
  body: any;
  /** Tool results sent since the last prompt the user typed: how far the model is in its task. */
  step: number;
  /** Names of the tools the CLI declared. */
  tools: string[];
}

export type Script = (turn: Turn) => Answer;

/** Run a command, write a file, then say so; a request that offers no tools (a title, a summary) gets text. */
export const defaultScript: Script = ({ step, tools }) => {
  if (tools.length === 0) return { text: 'Hello file' };
  if (step === 0) return { shell: 'echo hello > hello.txt && cat hello.txt' };
  if (step === 1) return { write: { path: 'notes.md', content: '# Notes\n\nhello.txt says hello.\n' } };
  return { text: 'Done: wrote hello.txt and notes.md' };
};

/** Token counts in every answer, so that usage parsing can be checked against known numbers. */
export const USAGE = { input: 100, output: 20, cacheRead: 50, cacheWrite: 10 };

export interface RecordedRequest {
  method: string;
  path: string;
  /** The key the CLI sent, as `x-api-key` or a bearer token. */
  apiKey?: string;
  body: any;
}

export interface FakeModelProvider {
  /** Origin, e.g. http://127.0.0.1:1234 (the APIs live under /v1). */
  url: string;
  requests: RecordedRequest[];
  /** Requests to paths the fake does not know, as `METHOD /path`. */
  unknown: string[];
  close(): Promise<void>;
}

const readJson = (req: IncomingMessage) =>
  new Promise<any>((resolve) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      try {
        resolve(text ? JSON.parse(text) : null);
      } catch {
        resolve(text);
      }
    });
  });

/** The CLI's working directory, as it tells the model in its system prompt or environment context. */
function cwdOf(body: unknown): string {
  const text = JSON.stringify(body);
  const found = /<cwd>([^<]+)<\/cwd>/.exec(text) ?? /[Ww]orking directory: ([^\\"]+)/.exec(text);
  return found ? found[1].trim() : '/';
}

function stepOf(messages: any[], isToolResult: (entry: any) => boolean, isPrompt: (entry: any) => boolean): number {
  let step = 0;
  for (let at = messages.length - 1; at >= 0 && !isPrompt(messages[at]); at--) if (isToolResult(messages[at])) step++;
  return step;
}

function sse(res: ServerResponse, events: Record<string, unknown>[]) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of events) res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  res.end();
}

// --- Anthropic Messages API ------------------------------------------------------------------------------

function anthropicTurn(body: any): Turn {
  const messages: any[] = body.messages ?? [];
  const blocks = (message: any) => (Array.isArray(message.content) ? message.content : []);
  const isToolResult = (message: any) => message.role === 'user' && blocks(message).some((block: any) => block.type === 'tool_result');
  const isPrompt = (message: any) => message.role === 'user' && !isToolResult(message);
  return { api: 'anthropic', body, step: stepOf(messages, isToolResult, isPrompt), tools: (body.tools ?? []).map((tool: any) => tool.name) };
}

function anthropicContent(answer: Answer, cwd: string, id: string): any {
  if ('text' in answer) return { type: 'text', text: answer.text };
  if ('shell' in answer) return { type: 'tool_use', id, name: 'Bash', input: { command: answer.shell, description: 'Run a command' } };
  return { type: 'tool_use', id, name: 'Write', input: { file_path: path.resolve(cwd, answer.write.path), content: answer.write.content } };
}

function answerAnthropic(res: ServerResponse, body: any, answer: Answer, n: number) {
  const content = anthropicContent(answer, cwdOf(body), `toolu_fake_${n}`);
  const stopReason = content.type === 'tool_use' ? 'tool_use' : 'end_turn';
  const usage = {
    input_tokens: USAGE.input,
    output_tokens: USAGE.output,
    cache_read_input_tokens: USAGE.cacheRead,
    cache_creation_input_tokens: USAGE.cacheWrite,
  };
  const message = { id: `msg_fake_${n}`, type: 'message', role: 'assistant', model: body.model, stop_reason: null, stop_sequence: null };
  if (!body.stream) {
    return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...message, content: [content], stop_reason: stopReason, usage }));
  }
  const delta =
    content.type === 'text' ? { type: 'text_delta', text: content.text } : { type: 'input_json_delta', partial_json: JSON.stringify(content.input) };
  // As the real API does, the output count at the start is a placeholder; the final one comes in message_delta.
  sse(res, [
    { type: 'message_start', message: { ...message, content: [], usage: { ...usage, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: content.type === 'text' ? { type: 'text', text: '' } : { ...content, input: {} } },
    { type: 'content_block_delta', index: 0, delta },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: USAGE.output } },
    { type: 'message_stop' },
  ]);
}

// --- OpenAI Responses API --------------------------------------------------------------------------------

function openaiTurn(body: any): Turn {
  const input: any[] = Array.isArray(body.input) ? body.input : [];
  const isToolResult = (item: any) => item.type === 'function_call_output' || item.type === 'custom_tool_call_output';
  // Codex sends its environment and the AGENTS.md files as user messages too; they are not prompts.
  const isContext = (item: any) => /<environment_context>|# AGENTS\.md/.test(JSON.stringify(item.content));
  const isPrompt = (item: any) => item.type === 'message' && item.role === 'user' && !isContext(item);
  const tools = (body.tools ?? []).map((tool: any) => tool.name ?? tool.type);
  return { api: 'openai', body, step: stepOf(input, isToolResult, isPrompt), tools };
}

/** Codex's output item for an answer, in the shape of the tools it declared. */
function openaiItem(answer: Answer, turn: Turn, n: number): any {
  const ids = { id: `fc_fake_${n}`, call_id: `call_fake_${n}`, status: 'completed' };
  const call = (name: string, args: unknown) => ({ type: 'function_call', ...ids, name, arguments: JSON.stringify(args) });
  if ('text' in answer) {
    const content = [{ type: 'output_text', text: answer.text, annotations: [] }];
    return { type: 'message', role: 'assistant', id: `msg_fake_${n}`, status: 'completed', content };
  }
  if ('shell' in answer) {
    // Codex 0.171 declares exec_command; older versions declared shell_command or shell.
    if (turn.tools.includes('exec_command')) return call('exec_command', { cmd: answer.shell });
    if (turn.tools.includes('shell_command')) return call('shell_command', { command: answer.shell });
    return call('shell', { command: ['bash', '-lc', answer.shell] });
  }
  const added = answer.write.content.replace(/\n$/, '').split('\n').map((line) => `+${line}`);
  const patch = ['*** Begin Patch', `*** Add File: ${answer.write.path}`, ...added, '*** End Patch'].join('\n');
  const declared = (turn.body.tools ?? []).find((tool: any) => tool.name === 'apply_patch');
  if (declared?.type === 'custom') return { type: 'custom_tool_call', ...ids, name: 'apply_patch', input: patch };
  return call('apply_patch', { input: patch });
}

function answerOpenai(res: ServerResponse, turn: Turn, answer: Answer, n: number) {
  const item = openaiItem(answer, turn, n);
  const response = { id: `resp_fake_${n}`, object: 'response', model: turn.body.model, status: 'in_progress', output: [] as unknown[] };
  const usage = {
    input_tokens: USAGE.input,
    input_tokens_details: { cached_tokens: USAGE.cacheRead },
    output_tokens: USAGE.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: USAGE.input + USAGE.output,
  };
  sse(res, [
    { type: 'response.created', response },
    { type: 'response.output_item.added', output_index: 0, item },
    { type: 'response.output_item.done', output_index: 0, item },
    { type: 'response.completed', response: { ...response, status: 'completed', output: [item], usage } },
  ]);
}

// --- Server ----------------------------------------------------------------------------------------------

export async function startFakeModelProvider(script: Script = defaultScript): Promise<FakeModelProvider> {
  const requests: RecordedRequest[] = [];
  const unknown: string[] = [];
  const server = createServer(async (req, res) => {
    const pathname = new URL(req.url!, 'http://fake').pathname;
    const body = await readJson(req);
    const apiKey = (req.headers['x-api-key'] as string | undefined) ?? /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    requests.push({ method: req.method!, path: pathname, apiKey, body });
    const n = requests.length;
    const json = (value: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (req.method === 'POST' && pathname === '/v1/messages') return answerAnthropic(res, body, script(anthropicTurn(body)), n);
    if (req.method === 'POST' && pathname === '/v1/messages/count_tokens') return json({ input_tokens: USAGE.input });
    if (req.method === 'POST' && pathname === '/v1/responses') {
      const turn = openaiTurn(body);
      return answerOpenai(res, turn, script(turn), n);
    }
    // Claude Code's reachability probe, sent unless its nonessential traffic is turned off.
    if (req.method === 'HEAD' && pathname === '/api/hello') return res.writeHead(200).end();
    if (req.method === 'GET' && pathname === '/v1/models') return json({ object: 'list', data: [], models: [] });
    unknown.push(`${req.method} ${pathname}`);
    res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { type: 'not_found_error', message: `no ${pathname} here` } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    unknown,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
