// A new MCP client that knows only the server's URL: its first call answers 401 pointing at the protected-
// resource metadata, which names the authorization server; it registers itself (DCR), asks for a device
// code for the MCP resource, the owner approves it in Chromium, and the client invokes a job through the
// tools (each answer checked against the tool's output schema) and reads the run until it succeeds on the
// local agent, then finds it among the resources.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as oauth from 'openid-client';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { accessToken } from '../support/identity';
import { startListeningApp, type ListeningApp } from '../support/server';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const EMAIL = 'mcp@acme.example';
const PASSWORD = 'correct horse battery';

let server: ListeningApp;
let browser: TestBrowser;

beforeAll(async () => {
  server = await startListeningApp({ localAgent: { command: 'cat > /dev/null; echo done', timeoutSeconds: 30 } });
  await server.app.owners.createOwner({ email: EMAIL, password: PASSWORD, tenantName: 'Acme' });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

it('discovers, registers, signs in with the device flow, and invokes a job through its tools', async () => {
  const mcpUrl = `${server.url}/mcp`;
  // 1. What the server says when called without a token.
  const first = await fetch(mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
  expect(first.status).toBe(401);
  const metadataUrl = /resource_metadata="([^"]+)"/.exec(first.headers.get('www-authenticate') ?? '')![1];
  const metadata = (await (await fetch(metadataUrl)).json()) as { resource: string; authorization_servers: string[] };
  expect(metadata.resource).toBe(mcpUrl);

  // 2. The authorization server it names: discovery, registration, a device code for the MCP resource.
  const config = await oauth.dynamicClientRegistration(
    new URL(metadata.authorization_servers[0]),
    { client_name: 'MCP client', token_endpoint_auth_method: 'none', grant_types: [DEVICE_GRANT, 'refresh_token'], response_types: [], redirect_uris: [] },
    oauth.None(),
    { execute: [oauth.allowInsecureRequests] },
  );
  const device = await oauth.initiateDeviceAuthorization(config, { scope: 'flows:read flows:write runs:read runs:write', resource: metadata.resource });

  // 3. The owner approves it in the browser.
  const page = await browser.context.newPage();
  await page.goto(device.verification_uri_complete!);
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Approve' }).click();
  await page.getByRole('heading', { name: 'Device approved' }).waitFor();
  await page.close();
  const tokens = await oauth.pollDeviceAuthorizationGrant(config, { ...device, interval: 0.01 } as oauth.DeviceAuthorizationResponse);

  // 4. Tools, with the token bound to the MCP resource.
  const client = new Client({ name: 'mcp-e2e', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { authorization: `Bearer ${tokens.access_token}` } } }));
  const api = { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' };
  // The same token is refused by the API: it is bound to the MCP endpoint.
  expect((await fetch(`${server.url}/api/v1/jobs`, { headers: api })).status).toBe(401);
  // Listed first, the tools' output schemas make the client check every answer below against them.
  const { tools } = await client.listTools();
  expect(tools.every((tool) => tool.outputSchema?.type === 'object' && tool.annotations?.readOnlyHint !== undefined)).toBe(true);
  const job = await client.callTool({ name: 'list_jobs', arguments: {} });
  expect(job.structuredContent).toEqual({ items: [], nextCursor: null });
  expect(JSON.parse((job.content as { text: string }[])[0].text)).toEqual(job.structuredContent);

  // A job made through the API (with a token for it), invoked through MCP.
  const owner = await server.app.database.db.owner.findFirstOrThrow({ where: { email: EMAIL }, include: { memberships: true } });
  const apiToken = await accessToken(server.app, { ownerId: owner.id, tenantId: owner.memberships[0].tenantId, email: EMAIL });
  const made = await (await fetch(`${server.url}/api/v1/jobs`, { method: 'POST', headers: { authorization: `Bearer ${apiToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Hello', promptTemplate: 'Hello', executionTargetId: 'local' }) })).json() as { id: string };
  const invoked = await client.callTool({ name: 'invoke_job', arguments: { jobId: made.id } });
  const { runId } = invoked.structuredContent as { runId: string };
  let state = '';
  for (let i = 0; i < 200 && state !== 'succeeded'; i++) {
    state = ((await client.callTool({ name: 'get_run', arguments: { runId } })).structuredContent as { state: string }).state;
    if (state !== 'succeeded') await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(state).toBe('succeeded');
  expect((await client.listResources()).resources.map((resource) => resource.uri)).toEqual([`flows://runs/${runId}`]);
  await client.close();
});
