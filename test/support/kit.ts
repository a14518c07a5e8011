// What most run and webhook tests need: a job made through the API, a signed GitHub delivery, and one way to
// wait for a run to settle, instead of a poller per test file.
import { createHmac, randomUUID } from 'node:crypto';
import { until } from './until';
import { call } from './http';
import type { TestApp } from './app';

type AnyApp = Parameters<typeof call>[0];

export const TERMINAL = ['succeeded', 'failed', 'timed_out', 'canceled', 'expired'];

/** A job created through the API (201 checked). */
export async function createJob(app: AnyApp, headers: Record<string, string>, body: Record<string, unknown>): Promise<{ id: string; slug: string } & Record<string, any>> {
  const res = await call(app, 'POST', '/api/v1/jobs', { headers, body });
  if (res.status !== 201) throw new Error(`the job was not created: ${res.status} ${res.text}`);
  return res.body;
}

/** The run as the API shows it, once it is in one of `states` (finished by default; about 20 s at most). */
export async function runSettled(app: AnyApp, headers: Record<string, string>, runId: string, states: string[] = TERMINAL): Promise<Record<string, any>> {
  return until(
    `run ${runId} to be ${states.join('/')}`,
    async () => {
      const run = (await call(app, 'GET', `/api/v1/runs/${runId}`, { headers })).body;
      return states.includes(run.state) && run;
    },
    { tries: 800 },
  );
}

/** Every run of the job once none is unfinished, and there are at least `count` (about 20 s at most). */
export async function jobSettled(app: TestApp, headers: Record<string, string>, jobId: string, count = 0): Promise<Record<string, any>[]> {
  return until(
    `${count} finished runs of job ${jobId}`,
    async () => {
      await app.runner.idle();
      const runs = (await call(app, 'GET', `/api/v1/runs?jobId=${jobId}`, { headers })).body as { state: string }[];
      return runs.length >= count && runs.every((run) => TERMINAL.includes(run.state)) && runs;
    },
    { tries: 800 },
  );
}

/** A GitHub delivery signed with the source's secret: its body and headers, ready for `POST /hooks/{sourceId}`. */
export function githubDelivery(secret: string, payload: Record<string, unknown>, { event = 'issues', id = randomUUID() } = {}) {
  const body = JSON.stringify(payload);
  const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  return { body, headers: { 'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': id, 'x-hub-signature-256': signature } };
}
