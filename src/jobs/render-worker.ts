// One thread of the render pool (render-pool.ts): takes one message at a time, the template sources and
// the context, and answers every output or the first TemplateProblem. Parsed templates cannot cross
// threads, so each worker parses what it is sent, with the same Liquid options, and keeps the parsed
// templates it saw last: a job's templates are the same source on every run.
import { parentPort } from 'node:worker_threads';
import { lruFor } from '../lib/lru';
import { compileTemplate, renderTemplate, TemplateProblem, type CompiledTemplate } from './templates-fns';

export interface RenderRequest {
  sources: string[];
  context: Record<string, unknown>;
}

/** The last message of a request; `{ started: index }` comes before each source after the first. */
export type RenderAnswer = { outputs: string[] } | { failed: number; message: string } | { error: string };

// At most 500 templates and 5 million characters of source (a template is at most 50,000 by the contract).
const parsed = lruFor<CompiledTemplate>({ max: 500, maxWeight: 5_000_000, weigh: (source) => source.length });

async function answer({ sources, context }: RenderRequest): Promise<RenderAnswer> {
  const outputs: string[] = [];
  for (const [index, source] of sources.entries()) {
    // The pool holds each template to the render limit: it is told when the next one starts.
    if (index > 0) parentPort!.postMessage({ started: index });
    try {
      outputs.push(await renderTemplate(parsed.get(source, () => compileTemplate(source)), context));
    } catch (err) {
      if (err instanceof TemplateProblem) return { failed: index, message: err.message };
      return { error: String((err as Error)?.stack ?? err) };
    }
  }
  return { outputs };
}

parentPort?.on('message', (request: RenderRequest) => {
  answer(request).then((reply) => parentPort!.postMessage(reply));
});
// Loaded: the pool's render limit counts from here, not from the thread's start.
parentPort?.postMessage({ ready: true });
