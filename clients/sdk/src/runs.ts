// Runs: the plain operations, and the two ways of watching a run that a client would otherwise write
// itself: waiting for its end, and following its trace as it grows without reading anything twice.
import type { Client } from 'openapi-fetch';
import type { Flows, FollowOptions, WaitOptions } from './api';
import type { paths } from './generated/openapi';
import { paginate } from './pagination';
import { DEFAULT_INTERVAL_MS, sleep, TERMINAL_STATES } from './polling';
import { unwrap } from './results';
import type { Run, RunState, TraceEvent } from './types';

/** The largest page the API gives; a run's trace is read in as few requests as it allows. */
const TRACE_PAGE = 100;

export function runsOf(client: Client<paths>): Flows['runs'] {
  const run = (runId: string) => ({ path: { runId } });
  const get = async (id: string, signal?: AbortSignal): Promise<Run> => unwrap(await client.GET('/api/v1/runs/{runId}', { params: run(id), signal }));

  async function waitFor(id: string, { intervalMs = DEFAULT_INTERVAL_MS, timeoutMs, signal }: WaitOptions = {}): Promise<Run> {
    const timeout = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
    const stop = signal && timeout ? AbortSignal.any([signal, timeout]) : (signal ?? timeout);
    let state: RunState | undefined;
    try {
      for (;;) {
        const current = await get(id, stop);
        if (TERMINAL_STATES.has(current.state)) return current;
        state = current.state;
        await sleep(intervalMs, stop);
      }
    } catch (error) {
      // The timeout's own reason says only that something timed out; this says what.
      if (timeout?.aborted && !signal?.aborted) throw new DOMException(`Run ${id} was still ${state ?? 'unread'} after ${timeoutMs} ms.`, 'TimeoutError');
      throw error;
    }
  }

  async function* follow(id: string, { intervalMs = DEFAULT_INTERVAL_MS, signal }: FollowOptions = {}): AsyncGenerator<TraceEvent, void, undefined> {
    let after = 0;
    for (;;) {
      // The state is read before the trace: once it is terminal, the trace read after it is complete.
      const { state } = await get(id, signal);
      let more = true;
      while (more) {
        // `after` (the last seq yielded) rather than the Link's cursor: nothing is read twice, and a
        // follower that has caught up gets an empty page instead of a cursor to hold on to.
        const result = await client.GET('/api/v1/runs/{runId}/trace', { params: { ...run(id), query: { after, limit: TRACE_PAGE } }, signal });
        for (const event of unwrap(result)) {
          after = event.seq;
          yield event;
        }
        more = result.response.headers.has('link');
      }
      if (TERMINAL_STATES.has(state)) return;
      await sleep(intervalMs, signal);
    }
  }

  return {
    list: (query = {}) => paginate((page) => client.GET('/api/v1/runs', { params: { query: { ...query, ...page } } })),
    get: (id) => get(id),
    stop: async (id) => unwrap(await client.POST('/api/v1/runs/{runId}/stop', { params: run(id) })),
    trace: (id) => paginate((page) => client.GET('/api/v1/runs/{runId}/trace', { params: { ...run(id), query: { limit: TRACE_PAGE, ...page } } })),
    waitFor,
    follow,
  };
}
