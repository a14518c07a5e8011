// `opencode run --format json` (`packages/opencode/src/cli/cmd/run.ts`): envelopes `{ type, timestamp,
// sessionID, part | error }` — `step_start`, `text`, `tool_use` (sent once the tool finished, with its
// state), `step_finish` with the step's tokens and cost in USD, and `error`. A step is a model turn; the
// answer is the text of the last step that did not end in tool calls.
import { isObject, num, readerState, str, textOf, type AgentEvent, type FileChangeKind, type StreamReader } from './agent-events-fns';

const FILE_TOOLS: Record<string, FileChangeKind> = { edit: 'update', write: 'write', patch: 'update', multiedit: 'update' };

export function opencodeReader(): StreamReader {
  const state = readerState('opencode');
  let stepText = '';

  function toolUse(part: Record<string, unknown>): AgentEvent[] {
    const tool = str(part.tool);
    const run = isObject(part.state) ? part.state : {};
    const input = isObject(run.input) ? run.input : {};
    const isError = run.status === 'error';
    const output = isError ? str(run.error) : textOf(run.output);
    if (tool === 'bash') {
      const exit = isObject(run.metadata) && typeof run.metadata.exit === 'number' ? run.metadata.exit : isError ? null : 0;
      return [{ type: 'command', data: { command: str(input.command), exitCode: exit, output } }];
    }
    if (tool in FILE_TOOLS && !isError) return [{ type: 'file_change', data: { path: str(input.filePath) || str(input.file_path), kind: FILE_TOOLS[tool] } }];
    const id = str(part.callID);
    return [
      { type: 'tool_call', data: { id, name: tool, input } },
      { type: 'tool_result', data: { id, output, isError } },
    ];
  }

  return {
    read(event) {
      const session = state.session(event.sessionID);
      const part = isObject(event.part) ? event.part : {};
      switch (event.type) {
        case 'step_start':
          state.finished = false;
          stepText = '';
          return session;
        case 'text': {
          const text = str(part.text);
          stepText += text;
          return text.trim() ? [...session, { type: 'message', data: { text } }] : session;
        }
        case 'tool_use':
          return [...session, ...toolUse(part)];
        case 'step_finish': {
          state.finished = true;
          if (part.reason !== 'tool-calls' && stepText) state.finalText = stepText;
          const tokens = isObject(part.tokens) ? part.tokens : {};
          const cache = isObject(tokens.cache) ? tokens.cache : {};
          const cached = num(cache.read);
          return [
            ...session,
            state.add({
              inputTokens: num(tokens.input) + cached + num(cache.write),
              outputTokens: num(tokens.output) + num(tokens.reasoning),
              cachedTokens: cached,
              turns: 1,
              costUsd: typeof part.cost === 'number' ? part.cost : null,
            }),
          ];
        }
        case 'error': {
          const error = isObject(event.error) ? event.error : {};
          state.failure = str(isObject(error.data) ? error.data.message : '') || str(error.name) || 'the agent reported an error';
          return [...session, { type: 'error', data: { message: state.failure, fatal: true } }];
        }
        default:
          return null;
      }
    },
    summary: state.summary,
  };
}
