// Cursor's `cursor-agent -p --output-format stream-json` (documented at cursor.com/docs/cli, plus what it
// is seen to print): `system/init`, `user`, `assistant` messages, `tool_call` `started` and `completed`
// (the call under a key per tool: `shellToolCall`, `editToolCall`, `writeToolCall`, `readToolCall`…), and a
// final `result`, with usage in newer builds. No cost.
import { isObject, num, readerState, str, textOf, type AgentEvent, type StreamReader } from './agent-events-fns';

/** The one tool call under `tool_call`: its key (`shellToolCall`) and what it holds. */
function callOf(event: Record<string, unknown>): { tool: string; args: Record<string, unknown>; result: Record<string, unknown> | null } {
  const holder = isObject(event.tool_call) ? event.tool_call : {};
  const [tool = '', call] = Object.entries(holder)[0] ?? [];
  const body = isObject(call) ? call : {};
  return { tool, args: isObject(body.args) ? body.args : {}, result: isObject(body.result) ? body.result : null };
}

export function cursorReader(): StreamReader {
  const state = readerState('cursor');

  function completed(event: Record<string, unknown>): AgentEvent[] {
    const { tool, args, result } = callOf(event);
    const success = result && isObject(result.success) ? result.success : null;
    const failure = result && !success ? result : null;
    const failed = failure ? str(isObject(failure.failure) ? failure.failure.message : failure.error) || JSON.stringify(failure) : '';
    if (tool === 'shellToolCall') {
      const exitCode = success && typeof success.exitCode === 'number' ? success.exitCode : failure && isObject(failure.failure) && typeof failure.failure.exitCode === 'number' ? failure.failure.exitCode : null;
      const output = success ? `${str(success.stdout)}${str(success.stderr)}` : failed;
      return [{ type: 'command', data: { command: str(args.command), exitCode, output } }];
    }
    if ((tool === 'editToolCall' || tool === 'writeToolCall' || tool === 'deleteToolCall') && success) {
      return [{ type: 'file_change', data: { path: str(args.path), kind: tool === 'deleteToolCall' ? 'delete' : tool === 'writeToolCall' ? 'write' : 'update' } }];
    }
    const id = str(event.call_id);
    const name = tool.replace(/ToolCall$/, '') || 'tool';
    return [
      { type: 'tool_call', data: { id, name, input: args } },
      { type: 'tool_result', data: { id, output: success ? textOf(success.content ?? success) : failed, isError: Boolean(failure) } },
    ];
  }

  return {
    read(event) {
      switch (event.type) {
        case 'system':
          return event.subtype === 'init' ? state.session(event.session_id, event.model) : null;
        case 'user':
          return [];
        case 'assistant': {
          const text = isObject(event.message) ? textOf(event.message.content) : '';
          if (!text.trim()) return [];
          state.finalText = text;
          return [state.add({ turns: 1 }), { type: 'message', data: { text } }];
        }
        case 'tool_call':
          return event.subtype === 'completed' ? completed(event) : [];
        case 'result': {
          state.finished = true;
          // `result` joins every assistant message; the answer is the last one, when there was one.
          if (!state.finalText && typeof event.result === 'string' && event.result) state.finalText = event.result;
          const events: AgentEvent[] = [...state.session(event.session_id)];
          if (isObject(event.usage)) {
            const usage = event.usage;
            const cached = num(usage.cacheReadTokens);
            events.push(state.total({ inputTokens: num(usage.inputTokens) + cached + num(usage.cacheWriteTokens), outputTokens: num(usage.outputTokens), cachedTokens: cached, turns: state.spent?.turns ?? 0, costUsd: null }));
          }
          if (event.is_error === true) {
            state.failure = str(event.result) || str(event.subtype) || 'the agent reported an error';
            events.push({ type: 'error', data: { message: state.failure, fatal: true } });
          }
          return events;
        }
        default:
          return null;
      }
    },
    summary: state.summary,
  };
}
