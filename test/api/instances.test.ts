// Two instances on one database: a job changed through one is what the other runs at once. On
// PostgreSQL the change is heard through the database; SQLite serves one instance (the check is skipped).
import { postgresUrl } from '../support/databases';
import { accessToken, createOwner } from '../support/identity';
import { call } from '../support/http';
import { startOtherInstance, startTestApp, type TestApp } from '../support/app';

const onPostgres = postgresUrl ? it : it.skip;

let app: TestApp;
let other: Awaited<ReturnType<typeof startOtherInstance>>;
let bearer: Record<string, string>;

beforeAll(async () => {
  app = await startTestApp();
  other = await startOtherInstance(app);
  const owner = await createOwner(app.database.db);
  bearer = { authorization: `Bearer ${await accessToken(app, owner)}` };
});
afterAll(async () => {
  await other.close();
  await app.close();
});

onPostgres('an instance runs the job as another instance last saved it', async () => {
  const created = await call(app, 'POST', '/api/v1/jobs', { headers: bearer, body: { name: 'Shared', promptTemplate: 'First' } });
  const invoke = async () => (await call(other, 'POST', `/api/v1/jobs/${created.body.id}/invocations`, { headers: bearer, body: {} })).body;
  const promptOf = async (runId: string) => (await call(other, 'GET', `/api/v1/runs/${runId}`, { headers: bearer })).body.prompt;
  expect(await promptOf((await invoke()).runId)).toBe('First'); // the other instance now keeps the job

  await call(app, 'PATCH', `/api/v1/jobs/${created.body.id}`, { headers: bearer, body: { promptTemplate: 'Second' } });
  let prompt = '';
  for (let i = 0; i < 40 && prompt !== 'Second'; i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    prompt = await promptOf((await invoke()).runId);
  }
  expect(prompt).toBe('Second');

  await call(app, 'POST', `/api/v1/jobs/${created.body.id}/disable`, { headers: bearer });
  let status = 0;
  for (let i = 0; i < 40 && status !== 409; i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    status = (await call(other, 'POST', `/api/v1/jobs/${created.body.id}/invocations`, { headers: bearer, body: {} })).status;
  }
  expect(status).toBe(409);
});
