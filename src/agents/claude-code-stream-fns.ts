// Claude Code's `--output-format stream-json` (claude-agent-sdk-python, `_internal/message_parser.py`):
// `system/init`, then `assistant` messages (text and tool_use blocks, usage per API response; one response
// may span several lines with the same message id), `user` messages carrying tool results, and a final
// `result` with the run's totals and cost. Shell commands and file edits are tool uses (`Bash`, `Edit`…):
// they are told once their result is in, with what it says.
import { isObject, num, readerState, str, textOf, type AgentEvent, type FileChangeKind, type StreamReader } from './agent-events-fns';

const FILE_TOOLS: Record<string, FileChangeKind> = { Edit: 'update', MultiEdit: 'update', NotebookEdit: 'update', Write: 'write' };

/** Input tokens of an Anthropic usage object: fresh, written to the cache and read from it. */
function tokensOf(usage: Record<string, unknown>) {
  const cached = num(usage.cache_read_input_tokens);
  return { inputTokens: num(usage.input_tokens) + num(usage.cache_creation_input_tokens) + cached, outputTokens: num(usage.output_tokens), cachedTokens: cached };
}

/** The exit code a Bash result says: Claude Code starts a failed command's result with `Exit code N`. */
function exitCodeOf(output: string, isError: boolean): number | null {
  const said = /^Exit code (\d+)/.exec(output);
  if (said) return Number(said[1]);
  return isError ? null : 0;
}

export function claudeCodeReader(): StreamReader {
  const state = readerState('claude-code');
  const calls = new Map<string, { name: string; input: Record<string, unknown> }>();
  const counted = new Set<string>();

  function assistant(message: Record<string, unknown>): AgentEvent[] {
    const events: AgentEvent[] = [];
    const id = str(message.id);
    if (isObject(message.usage) && id && !counted.has(id)) {
      counted.add(id);
      events.push(state.add({ ...tokensOf(message.usage), turns: 1 }));
    }
    for (const block of Array.isArray(message.content) ? message.content : []) {
      if (!isObject(block)) continue;
      if (block.type === 'text' && str(block.text).trim()) events.push({ type: 'message', data: { text: str(block.text) } });
      if (block.type === 'tool_use') {
        const call = { name: str(block.name), input: isObject(block.input) ? block.input : {} };
        calls.set(str(block.id), call);
        if (call.name !== 'Bash' && !(call.name in FILE_TOOLS)) events.push({ type: 'tool_call', data: { id: str(block.id), name: call.name, input: call.input } });
      }
    }
    return events;
  }

  function toolResult(block: Record<string, unknown>, detail: unknown): AgentEvent[] {
    const id = str(block.tool_use_id);
    const call = calls.get(id);
    calls.delete(id);
    const output = textOf(block.content);
    const isError = block.is_error === true;
    if (call?.name === 'Bash') return [{ type: 'command', data: { command: str(call.input.command), exitCode: exitCodeOf(output, isError), output } }];
    if (call && call.name in FILE_TOOLS && !isError) {
      // Write's result says whether it made the file (`create`) or replaced it (`update`).
      const made = isObject(detail) ? detail.type : undefined;
      const kind = call.name === 'Write' && (made === 'create' || made === 'update') ? (made === 'create' ? 'add' : 'update') : FILE_TOOLS[call.name];
      return [{ type: 'file_change', data: { path: str(call.input.file_path) || str(call.input.notebook_path), kind } }];
    }
    return [{ type: 'tool_result', data: { id, output, isError } }];
  }

  function result(event: Record<string, unknown>): AgentEvent[] {
    state.finished = true;
    state.finalText = typeof event.result === 'string' ? event.result : state.finalText;
    const events: AgentEvent[] = [];
    if (isObject(event.usage)) {
      // `total_cost_usd` adds up every run of a resumed session; this run's own cost is per model since the last result.
      const own = isObject(event.model_usage_since_last_result) ? Object.values(event.model_usage_since_last_result).filter(isObject) : null;
      const cost = own?.length ? own.reduce((sum, model) => sum + num(model.costUSD), 0) : typeof event.total_cost_usd === 'number' ? event.total_cost_usd : null;
      events.push(state.total({ ...tokensOf(event.usage), turns: num(event.num_turns) || (state.spent?.turns ?? 0), costUsd: cost }));
    }
    if (event.is_error === true || (str(event.subtype) && event.subtype !== 'success')) {
      const subtype = str(event.subtype);
      const said = typeof event.result === 'string' && event.result ? event.result : Array.isArray(event.errors) ? event.errors.map(textOf).join('; ') : '';
      state.failure = subtype && subtype !== 'success' ? `${subtype}${said ? `: ${said}` : ''}` : said || 'the agent reported an error';
      events.push({ type: 'error', data: { message: state.failure, fatal: true } });
    }
    return events;
  }

  return {
    read(event) {
      switch (event.type) {
        case 'system':
          return event.subtype === 'init' ? state.session(event.session_id, event.model) : null;
        case 'assistant':
          return [...state.session(event.session_id), ...(isObject(event.message) ? assistant(event.message) : [])];
        case 'user': {
          const content = isObject(event.message) && Array.isArray(event.message.content) ? event.message.content : [];
          return content.flatMap((block) => (isObject(block) && block.type === 'tool_result' ? toolResult(block, event.tool_use_result) : []));
        }
        case 'result':
          return [...state.session(event.session_id), ...result(event)];
        case 'stream_event':
          return []; // partial messages: the whole one follows
        default:
          return null;
      }
    },
    summary: state.summary,
  };
}
