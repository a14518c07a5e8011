// A run's progress as the place that asked for the work shows it, whatever the sender: what a trace event
// says as a step, the run's final facts, the text of the progress message, and edits of that message
// coalesced so that a busy run edits it at most once every few seconds.
import { clip } from './text';

type Json = Record<string, unknown>;

/** A trace event of the run: a milestone or the current step; the run's end, awaited; the token to mask. */
export interface Reporter {
  /** The token reporting uses, which the run's trace must never show (masked like a secret). */
  token: string;
  /** A trace event of the run: a milestone or the current step, shown at the next edit. */
  observe(type: string, data: Record<string, unknown>): void;
  /** The run ended (or goes back to the queue): the final edit (and a check's conclusion), awaited. */
  finish(final: FinalReport): Promise<void>;
}

/** What reporting records in the run's trace (`report` events). */
export type ReportRecord = (data: Record<string, unknown>) => void;

/** What a trace event tells of the run's progress: a milestone kept in the list, or the current step. */
export function stepOf(type: string, data: Json): { milestone: string } | { current: string } | null {
  const text = (value: unknown) => (typeof value === 'string' ? clip(value.replace(/\s+/g, ' ')) : '');
  if (type === 'workspace') {
    if (data.step === 'cloned') return { milestone: `Cloned ${text(data.repository)} at \`${text(data.ref)}\`${data.continued ? ' (continuing its branch)' : ''}` };
    if (data.step === 'committed') return { milestone: `Committed ${data.files} file${data.files === 1 ? '' : 's'} (+${data.insertions} −${data.deletions})` };
    if (data.step === 'pushed') return { milestone: `Pushed \`${text(data.branch)}\`` };
    if (data.step === 'pull_request') return { milestone: `${data.action === 'updated' ? 'Updated' : 'Opened'} ${data.kind === 'merge_request' ? `merge request !${data.number}` : `pull request #${data.number}`}` };
    if (data.step === 'unchanged') return { milestone: 'No file changed: nothing to push' };
    if (data.step === 'failed') return { milestone: `⚠️ ${text(data.message)}` };
  }
  if (type === 'command') return { current: `Ran \`${text(data.command)}\`` };
  if (type === 'file_change') return { current: `Changed \`${text(data.path)}\`` };
  if (type === 'tool_call') return { current: `Used ${text(data.name)}` };
  if (type === 'session_started' || (type === 'state_changed' && data.to === 'running')) return { current: 'The agent is working' };
  return null;
}

/** A duration as people say it: 45 s, 3 min 12 s, 1 h 4 min. */
export function elapsed(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** What the final message says of a run. */
export interface FinalReport {
  state: string;
  error: string | null;
  summary: string | null;
  pullRequestUrl: string | null;
  spent: string | null;
}

const STATE_WORDS: Record<string, string> = { succeeded: '✅ Succeeded', failed: '❌ Failed', timed_out: '⏱️ Timed out', canceled: '⏹️ Stopped', expired: '⏹️ Expired', queued: '🔁 Trying again' };

export interface Progress {
  runName: string;
  runUrl: string;
  elapsedMs: number;
  milestones: string[];
  current: string | null;
  final: FinalReport | null;
}

/** What the progress message says, in parts each sender writes in its own markup. */
export function progressParts({ elapsedMs, milestones, current, final }: Progress) {
  return {
    /** `✅ Succeeded`, `⏳ Working`, … */
    state: final ? (STATE_WORDS[final.state] ?? final.state) : '⏳ Working',
    /** What follows the state: ` after 3 min 2 s`, or ` · 45 s` while it works. */
    timing: final ? ` after ${elapsed(elapsedMs)}` : ` · ${elapsed(elapsedMs)}`,
    steps: [...milestones, ...(!final && current ? [`${current} …`] : [])],
    summary: final?.summary ?? null,
    error: final?.error && final.state !== 'succeeded' ? final.error : null,
    facts: final ? [...(final.pullRequestUrl ? [`Pull request: ${final.pullRequestUrl}`] : []), ...(final.spent ? [`Spent: ${final.spent}`] : [])] : [],
  };
}

/** The progress message in Markdown (GitHub): the run's name, where it stands, its steps, and at the end its result. */
export function progressBody(progress: Progress): string {
  const parts = progressParts(progress);
  const lines = [`### Flows: ${progress.runName}`, `**${parts.state}**${parts.timing} · [view the run](${progress.runUrl})`, ''];
  for (const step of parts.steps) lines.push(`- ${step}`);
  if (parts.summary) lines.push('', parts.summary);
  if (parts.error) lines.push('', `> ${parts.error.replace(/\n/g, '\n> ')}`);
  if (parts.facts.length) lines.push('', ...parts.facts.map((fact) => `- ${fact}`));
  return lines.join('\n').trim();
}

/** A run's progress as its trace events tell it: `observe` says whether the message should change. */
export function trackProgress(runName: string, runUrl: string) {
  const began = Date.now();
  const milestones: string[] = [];
  let current: string | null = null;
  return {
    observe(type: string, data: Json): boolean {
      const step = stepOf(type, data);
      if (!step) return false;
      if ('milestone' in step) milestones.push(step.milestone);
      else current = step.current;
      return true;
    },
    at: (final: FinalReport | null): Progress => ({ runName, runUrl, elapsedMs: Date.now() - began, milestones, current, final }),
  };
}

/** One part of reporting (`action`), recorded in the trace as done or failed (`describe` says why); never thrown. */
export const reportAttempts = (record: ReportRecord, describe: (err: unknown) => string) => async (action: string, work: () => Promise<Record<string, unknown> | void>) => {
  try {
    record({ action, ok: true, ...((await work()) ?? {}) });
    return true;
  } catch (err) {
    record({ action, ok: false, message: describe(err) });
    return false;
  }
};

/**
 * Edits of one progress message, one at a time, at most one every `editEveryMs`: a change while one waits or
 * is under way is taken by the next. `edit` failing is told to `failed` once.
 */
export function coalescedEdits(edit: (final: FinalReport | null) => Promise<void>, failed: (err: unknown) => void, editEveryMs: number) {
  let editing: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | null = null;
  let lastEdit = Date.now();
  let told = false;
  const now = (final: FinalReport | null) => {
    editing = editing.then(async () => {
      lastEdit = Date.now();
      try {
        await edit(final);
      } catch (err) {
        if (!told) failed(err);
        told = true;
      }
    });
    return editing;
  };
  return {
    /** An edit within `editEveryMs` of the last one. */
    soon() {
      if (timer) return;
      timer = setTimeout(
        () => {
          timer = null;
          void now(null);
        },
        Math.max(0, lastEdit + editEveryMs - Date.now()),
      );
    },
    /** The final edit, now, awaited. */
    final(final: FinalReport) {
      if (timer) clearTimeout(timer);
      timer = null;
      return now(final);
    },
  };
}
