// A run's trace as the console shows it: a row per event, what an agent said, ran, changed and spent in words
// and folded blocks, any other event as its data. The run page and the rows its live script adds are both
// rendered here, so that a row added while the run goes reads as the page's own.
import type { components } from '../../generated/openapi';
import { html, type Html } from '../http/html';
import { dollars, tableRow, time } from '../pages/console-layout';

type TraceEvent = components['schemas']['RunTraceEvent'];
type RunUsage = components['schemas']['RunUsage'];
type Data = Record<string, unknown>;

export const TRACE_COLUMNS = ['#', 'Time', 'Event', 'Data'];

const isText = (value: unknown): value is string => typeof value === 'string';
const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const count = (value: number) => value.toLocaleString('en-US');
const plural = (value: number, word: string) => `${count(value)} ${word}${value === 1 ? '' : 's'}`;
/** A value an agent passed or got back: text as it is, anything else as indented JSON. */
const asText = (value: unknown) => (isText(value) ? value : (JSON.stringify(value, null, 2) ?? ''));

const COST_SOURCES: Record<string, string> = { reported: 'reported by the agent', computed: 'computed from the operator\u2019s prices' };

/** What a run's agent spent, in a line: tokens, turns and the cost with where it comes from, or that it is unknown. */
export function usageText(usage: Pick<RunUsage, 'inputTokens' | 'outputTokens' | 'cachedTokens' | 'turns' | 'costUsd'> & { costSource?: string }): string {
  const source = usage.costSource ? COST_SOURCES[usage.costSource] : undefined;
  const cost = usage.costUsd === null ? 'cost unknown' : `${dollars(usage.costUsd)}${source ? ` (${source})` : ''}`;
  return `${count(usage.inputTokens)} tokens in, ${count(usage.outputTokens)} out, ${count(usage.cachedTokens)} cached · ${plural(usage.turns, 'turn')} · ${cost}`;
}

/** Text as paragraphs (split at blank lines), each keeping its line breaks. */
const paragraphs = (text: string): Html => html`${text.split(/\n\s*\n/).map((part) => part.replace(/^\s*\n|\n\s*$/g, '')).filter(Boolean).map((part) => html`<p>${part}</p>`)}`;

/** An exit code, marked when the command failed. */
const exitText = (exitCode: unknown): Html =>
  exitCode === 0 ? html`exit 0` : isCount(exitCode) ? html`<strong class="error">exit ${exitCode}</strong>` : html`exit code unknown`;

/** Output folded under `summary`, or `summary` alone when there was none. */
function folded(summary: Html, output: string): Html {
  const lines = output.replace(/\n$/, '').split('\n').length;
  if (!output) return html`<p>${summary} · no output</p>`;
  return html`<details><summary>${summary} · ${plural(lines, 'line')}</summary><pre>${output}</pre></details>`;
}

const REPORT_ACTIONS: Record<string, string> = { reaction: 'Reacted with eyes (👀)', comment: 'Progress comment', check_run: 'Check run', skipped: 'Not reporting' };

/** The typed events of an agent's stream, each shown when its data has the fields it should (else as data). */
const VIEWS: Partial<Record<TraceEvent['type'], (data: Data) => Html | null>> = {
  session_started: ({ agent, sessionId, model, continuedFromRunId, notContinued }) =>
    isText(agent) && isText(sessionId)
      ? html`<p><strong>${agent}</strong> started, ${isText(model) ? html`model <code>${model}</code>` : 'its default model'}, session <code>${sessionId}</code>${
          isText(continuedFromRunId) ? html`, continued from run <a href="/console/runs/${continuedFromRunId}">${continuedFromRunId}</a>` : null
        }${isText(notContinued) ? html`; a new session, as the earlier one could not continue: ${notContinued}` : null}</p>`
      : null,
  message: ({ text }) => (isText(text) ? paragraphs(text) : null),
  command: ({ command, exitCode, output }) => (isText(command) && isText(output) ? html`<pre class="command">$ ${command}</pre>${folded(exitText(exitCode), output)}` : null),
  file_change: ({ path, kind }) => (isText(path) && isText(kind) ? html`<p>${kind} <code>${path}</code></p>` : null),
  tool_call: ({ id, name, input }) =>
    isText(name) ? html`<details><summary><code>${name}</code>${isText(id) ? html` <span class="call-id">${id}</span>` : null}</summary><pre>${input === undefined ? 'no input' : asText(input)}</pre></details>` : null,
  tool_result: ({ id, output, isError }) =>
    output === undefined
      ? null
      : folded(html`${isError === true ? html`<strong class="error">Error</strong>` : 'Result'}${isText(id) ? html` of <span class="call-id">${id}</span>` : null}`, asText(output)),
  workspace: (data) => {
    const { step } = data;
    if (step === 'cloned' && isText(data.repository) && isText(data.ref) && isText(data.commit)) {
      return html`<p>Cloned <code>${data.repository}</code> at <code>${data.ref}</code> (<code>${data.commit.slice(0, 7)}</code>)${isCount(data.durationMs) ? html` in ${(data.durationMs / 1000).toFixed(1)} s` : null}${data.continued ? ', continuing its branch' : null}</p>`;
    }
    if (step === 'committed' && isText(data.commit) && isCount(data.files)) return html`<p>Committed <code>${data.commit.slice(0, 7)}</code>: ${plural(data.files, 'file')}, +${String(data.insertions)} −${String(data.deletions)}</p>`;
    if (step === 'pushed' && isText(data.branch)) return html`<p>Pushed <code>${data.branch}</code></p>`;
    if (step === 'pull_request' && isText(data.url)) return html`<p>${data.action === 'updated' ? 'Updated' : 'Opened'} <a href="${data.url}">pull request #${String(data.number)}</a></p>`;
    if ((step === 'unchanged' || step === 'failed') && isText(data.message)) return step === 'failed' ? html`<p class="error">${data.message}</p>` : html`<p>${data.message}</p>`;
    return null;
  },
  report: ({ action, ok, url, message }) =>
    isText(action)
      ? html`<p>${REPORT_ACTIONS[action] ?? action}${ok === false ? html`: <span class="error">${isText(message) ? message : 'failed'}</span>` : isText(url) ? html` (<a href="${url}">on GitHub</a>)` : isText(message) ? html`: ${message}` : null}</p>`
      : null,
  usage: (data) => (['inputTokens', 'outputTokens', 'cachedTokens', 'turns'].every((field) => isCount(data[field])) && (data.costUsd === null || isCount(data.costUsd))
    ? html`<p>${usageText(data as Parameters<typeof usageText>[0])}</p>`
    : null),
};

/** An event as text, as every event was shown before the agents' events were read: a line of output, or its data. */
function dataText(event: TraceEvent): string {
  const data = event.data as Data | null;
  if (event.type === 'agent_output' && isText(data?.text)) return data.text;
  return data === null || data === undefined ? '' : JSON.stringify(data);
}

function eventView(event: TraceEvent): Html {
  const data = event.data as unknown;
  const view = typeof data === 'object' && data !== null && !Array.isArray(data) ? VIEWS[event.type]?.(data as Data) : null;
  return view ? html`<div class="event">${view}</div>` : html`<pre>${dataText(event)}</pre>`;
}

export const traceCells = (event: TraceEvent): Html[] => [html`${event.seq}`, time(event.at), html`${event.type}`, eventView(event)];

/** Rows of the trace's table, for the live script to append. */
export const traceRows = (events: TraceEvent[]): Html => html`${events.map((event) => tableRow(TRACE_COLUMNS, traceCells(event)))}`;
