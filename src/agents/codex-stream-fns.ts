// `codex exec --json` (openai/codex `codex-rs/exec/src/exec_events.rs`): `thread.started`, then per turn
// `turn.started`, items (`item.started|updated|completed`: agent messages, commands with their exit code,
// file changes, MCP tool calls, web searches) and `turn.completed` with the turn's token usage, or
// `turn.failed`. Items are told once completed. The stream names no model and reports no cost.
import { isObject, num, readerState, str, textOf, type AgentEvent, type FileChangeKind, type StreamReader } from './agent-events-fns';

const CHANGE_KINDS = new Set<FileChangeKind>(['add', 'update', 'delete']);

/** The agent's command without the login shell Codex wraps it in (`/bin/bash -lc 'cd x && make'`). */
function unwrapped(command: string): string {
  const inner = /^\/(?:usr\/)?bin\/(?:ba|z)?sh -lc '((?:[^']|'\\'')*)'$/s.exec(command);
  return inner ? inner[1].replace(/'\\''/g, "'") : command;
}

export function codexReader(): StreamReader {
  const state = readerState('codex');

  function completed(item: Record<string, unknown>): AgentEvent[] | null {
    switch (item.type) {
      case 'agent_message':
        state.finalText = str(item.text);
        return state.finalText.trim() ? [{ type: 'message', data: { text: state.finalText } }] : [];
      case 'command_execution':
        return [{ type: 'command', data: { command: unwrapped(str(item.command)), exitCode: typeof item.exit_code === 'number' ? item.exit_code : null, output: str(item.aggregated_output) } }];
      case 'file_change':
        if (item.status === 'failed') return [{ type: 'error', data: { message: `A file change failed: ${JSON.stringify(item.changes ?? [])}`, fatal: false } }];
        return (Array.isArray(item.changes) ? item.changes : []).filter(isObject).map((change) => ({
          type: 'file_change' as const,
          data: { path: str(change.path), kind: CHANGE_KINDS.has(change.kind as FileChangeKind) ? (change.kind as FileChangeKind) : 'write' },
        }));
      case 'mcp_tool_call': {
        const id = str(item.id);
        const failed = isObject(item.error) || item.status === 'failed';
        const output = failed ? str(isObject(item.error) ? item.error.message : '') : textOf(isObject(item.result) ? item.result.content : item.result);
        return [
          { type: 'tool_call', data: { id, name: `${str(item.server)}.${str(item.tool)}`, input: item.arguments ?? {} } },
          { type: 'tool_result', data: { id, output, isError: failed } },
        ];
      }
      case 'web_search':
        return [{ type: 'tool_call', data: { id: str(item.id), name: 'web_search', input: { query: str(item.query) } } }];
      case 'error':
        return [{ type: 'error', data: { message: str(item.message), fatal: false } }];
      case 'reasoning':
      case 'todo_list':
        return [];
      default:
        return null;
    }
  }

  return {
    read(event) {
      switch (event.type) {
        case 'thread.started':
          return state.session(event.thread_id);
        case 'turn.started':
          state.finished = false;
          return [];
        case 'item.started':
        case 'item.updated':
          return [];
        case 'item.completed':
          return isObject(event.item) ? completed(event.item) : null;
        case 'turn.completed': {
          state.finished = true;
          const usage = isObject(event.usage) ? event.usage : {};
          return [state.add({ inputTokens: num(usage.input_tokens), cachedTokens: num(usage.cached_input_tokens), outputTokens: num(usage.output_tokens), turns: 1 })];
        }
        case 'turn.failed': {
          state.finished = true;
          state.failure = str(isObject(event.error) ? event.error.message : '') || 'the turn failed';
          return [{ type: 'error', data: { message: state.failure, fatal: true } }];
        }
        case 'error':
          return [{ type: 'error', data: { message: str(event.message), fatal: false } }];
        default:
          return null;
      }
    },
    summary: state.summary,
  };
}
