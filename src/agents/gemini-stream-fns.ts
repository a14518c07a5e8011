// Gemini CLI's `-o stream-json` (google-gemini/gemini-cli `packages/core/src/output/types.ts`): `init`,
// `message` (the assistant's text arrives in deltas), `tool_use` and `tool_result` paired by `tool_id`,
// non-fatal `error`s, and a final `result` with the run's token stats. No cost, no turn count: a turn is a
// model response, counted as the assistant's text or tool calls that follow something else. The deltas of
// one response make one message; the last message is the answer.
import { isObject, num, readerState, str, textOf, type AgentEvent, type FileChangeKind, type StreamReader } from './agent-events-fns';

const FILE_TOOLS: Record<string, FileChangeKind> = { write_file: 'write', replace: 'update' };
const SHELL = 'run_shell_command';
const KNOWN = new Set(['init', 'tool_use', 'tool_result', 'error', 'result']);

export function geminiReader(): StreamReader {
  const state = readerState('gemini');
  const calls = new Map<string, { name: string; input: Record<string, unknown> }>();
  let text = '';
  let responding = false;

  /** The assistant's text so far as one message, told when something else comes; the last one is its answer. */
  const said = (): AgentEvent[] => {
    const message = text;
    text = '';
    if (!message.trim()) return [];
    state.finalText = message;
    return [{ type: 'message', data: { text: message } }];
  };
  const turn = () => {
    if (!responding) state.add({ turns: 1 });
    responding = true;
  };

  function toolResult(event: Record<string, unknown>): AgentEvent[] {
    const id = str(event.tool_id);
    const call = calls.get(id);
    calls.delete(id);
    const isError = event.status === 'error';
    const output = isError ? str(isObject(event.error) ? event.error.message : event.error) || textOf(event.output) : textOf(event.output);
    if (call?.name === SHELL) {
      const exit = /Exit Code: (-?\d+)/i.exec(output);
      return [{ type: 'command', data: { command: str(call.input.command), exitCode: exit ? Number(exit[1]) : isError ? null : 0, output } }];
    }
    if (call && call.name in FILE_TOOLS && !isError) return [{ type: 'file_change', data: { path: str(call.input.file_path), kind: FILE_TOOLS[call.name] } }];
    return [{ type: 'tool_result', data: { id, output, isError } }];
  }

  return {
    read(event) {
      if (event.type === 'message') {
        if (event.role !== 'assistant') {
          responding = false;
          return said();
        }
        turn();
        const piece = str(event.content);
        text = event.delta === true ? text + piece : piece;
        return [];
      }
      if (!KNOWN.has(str(event.type))) return null;
      const before = said();
      switch (event.type) {
        case 'init':
          return [...before, ...state.session(event.session_id, event.model)];
        case 'tool_use': {
          turn();
          const call = { name: str(event.tool_name), input: isObject(event.parameters) ? event.parameters : {} };
          calls.set(str(event.tool_id), call);
          if (call.name === SHELL || call.name in FILE_TOOLS) return before;
          return [...before, { type: 'tool_call', data: { id: str(event.tool_id), name: call.name, input: call.input } }];
        }
        case 'tool_result':
          responding = false;
          return [...before, ...toolResult(event)];
        case 'error':
          return [...before, { type: 'error', data: { message: str(event.message), fatal: false } }];
        case 'result': {
          state.finished = true;
          const stats = isObject(event.stats) ? event.stats : {};
          const usage = state.total({
            inputTokens: num(stats.input_tokens),
            outputTokens: num(stats.output_tokens),
            cachedTokens: num(stats.cached),
            turns: state.spent?.turns ?? 0,
            costUsd: null,
          });
          if (event.status !== 'error') return [...before, usage];
          state.failure = str(isObject(event.error) ? event.error.message : event.error) || 'the agent reported an error';
          return [...before, usage, { type: 'error', data: { message: state.failure, fatal: true } }];
        }
        default:
          return before;
      }
    },
    summary: state.summary,
  };
}
