// The official MCP conformance suite (`@modelcontextprotocol/conformance`) against Flows' /mcp:
// `node scripts/mcp-conformance.mjs`; exits 1 when a check fails.
//
// The suite needs Node 22. It and a Node 22 binary (the registry's `node-<platform>-<arch>` package, the
// binary alone, with no install script) are installed once, outside the lockfile, into
// node_modules/.cache/mcp-conformance (or FLOWS_TOOLS_CACHE). Flows runs in this process, built as
// `npm start` builds it, on a fresh SQLite database in a temporary directory, with one owner, a job with an
// invocation trigger and a run. The suite's server mode cannot authenticate, so it calls a loopback proxy
// that adds the owner's MCP bearer token and passes every other header on as sent (Host and Origin
// included); BASE_URL is the proxy's origin, as it is a reverse proxy's in a deployment.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as forward, createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bearerFor, dist, openApp } from './bench-app.mjs';

const SUITE = { name: '@modelcontextprotocol/conformance', version: '0.1.16' };
const NODE = { name: `node-${process.platform}-${process.arch}`, version: '22.23.3' };

// Scenarios of the suite that call the reference server's own fixtures (tools such as `test_simple_text`,
// resources such as `test://static-text`, prompts) or need what Flows does not declare; every other
// server scenario runs.
const NOT_APPLICABLE = {
  'logging-set-level': 'Flows declares no logging capability',
  'completion-complete': 'Flows declares no completions capability',
  'tools-call-simple-text': 'calls the fixture tool test_simple_text',
  'tools-call-image': 'calls the fixture tool test_image_content',
  'tools-call-audio': 'calls the fixture tool test_audio_content',
  'tools-call-embedded-resource': 'calls the fixture tool test_embedded_resource',
  'tools-call-mixed-content': 'calls the fixture tool test_multiple_content_types',
  'tools-call-with-logging': 'calls the fixture tool test_tool_with_logging',
  'tools-call-error': 'calls the fixture tool test_error_handling',
  'tools-call-with-progress': 'calls the fixture tool test_tool_with_progress',
  'tools-call-sampling': 'calls the fixture tool test_sampling',
  'tools-call-elicitation': 'calls the fixture tool test_elicitation',
  'json-schema-2020-12': 'reads the fixture tool json_schema_2020_12_tool',
  'elicitation-sep1034-defaults': 'calls the fixture tool test_elicitation_sep1034_defaults',
  'elicitation-sep1330-enums': 'calls the fixture tool test_elicitation_sep1330_enums',
  'server-sse-polling': 'needs a session and SSE streams; Flows answers JSON, statelessly',
  'server-sse-multiple-streams': 'needs a session and SSE streams; Flows answers JSON, statelessly',
  'resources-read-text': 'reads the fixture resource test://static-text',
  'resources-read-binary': 'reads the fixture resource test://static-binary',
  'resources-templates-read': 'reads the fixture resource test://template/123/data',
  'resources-subscribe': 'Flows declares no resource subscriptions (stateless)',
  'resources-unsubscribe': 'Flows declares no resource subscriptions (stateless)',
  'prompts-list': 'Flows declares no prompts capability',
  'prompts-get-simple': 'Flows declares no prompts capability',
  'prompts-get-with-args': 'Flows declares no prompts capability',
  'prompts-get-embedded-resource': 'Flows declares no prompts capability',
  'prompts-get-with-image': 'Flows declares no prompts capability',
};

const root = path.resolve(import.meta.dirname, '..');
const cache = process.env.FLOWS_TOOLS_CACHE || path.join(root, 'node_modules', '.cache', 'mcp-conformance');

/** The suite and Node 22 in the cache, installed when their versions are not there yet. */
function installTools() {
  const installed = (name) => {
    const manifest = path.join(cache, 'node_modules', name, 'package.json');
    return existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).version;
  };
  if (installed(SUITE.name) !== SUITE.version || installed(NODE.name) !== NODE.version) {
    console.error(`Installing ${SUITE.name}@${SUITE.version} and ${NODE.name}@${NODE.version} into ${cache}…`);
    mkdirSync(cache, { recursive: true });
    writeFileSync(path.join(cache, 'package.json'), '{ "private": true }\n');
    execFileSync('npm', ['install', '--prefix', cache, '--ignore-scripts', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel=error', `${SUITE.name}@${SUITE.version}`, `${NODE.name}@${NODE.version}`], { stdio: 'inherit' });
  }
  return { node: path.join(cache, 'node_modules', NODE.name, 'bin', 'node'), suite: path.join(cache, 'node_modules', SUITE.name, 'dist', 'index.js') };
}

const listen = (server) => new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));

/** Passes each request on to `upstream.port` as it came, with the bearer `upstream.token` added when it has none. */
function bearerProxy(upstream) {
  return createServer((req, res) => {
    const headers = { ...req.headers, authorization: req.headers.authorization ?? `Bearer ${upstream.token}` };
    const passed = forward({ host: '127.0.0.1', port: upstream.port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
    passed.on('error', () => res.destroy());
    req.pipe(passed);
  });
}

/** Runs the suite's CLI; resolves with its exit code. */
function run(node, args) {
  return new Promise((resolve) => spawn(node, args, { stdio: 'inherit', cwd: cache }).on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
}

async function main() {
  const tools = installTools();
  execFileSync(process.execPath, [path.join(root, 'scripts', 'build-if-stale.mjs')], { stdio: 'inherit' });
  const listed = execFileSync(tools.node, [tools.suite, 'list', '--server'], { encoding: 'utf8' });
  const scenarios = [...listed.matchAll(/^\s+- (\S+)/gm)].map((match) => match[1]).filter((name) => !(name in NOT_APPLICABLE));

  const dir = mkdtempSync(path.join(tmpdir(), 'flows-mcp-conformance-'));
  // The proxy listens first: its origin is the app's BASE_URL, and the token is bound to it.
  const upstream = { port: 0, token: '' };
  const proxy = bearerProxy(upstream);
  const proxyPort = await listen(proxy);
  const opened = await openApp(dir, { env: { BASE_URL: `http://127.0.0.1:${proxyPort}` } });
  const built = await dist('src/app.js').buildApp(opened);
  const { ownerId, tenant } = await built.owners.createOwner({ email: 'conformance@example.test', password: 'conformance password', tenantName: 'Conformance' });
  const owner = { ownerId, tenantId: tenant.id };
  const server = dist('src/http/server.js').createHttpServer(built.app);
  const serverPort = await listen(server);
  Object.assign(upstream, { port: serverPort, token: await bearerFor(built, opened, owner, `${opened.config.baseUrl.origin}/mcp`) });

  // Something to list: a job with an invocation trigger (a typed tool) and one run of it (a resource).
  const api = { authorization: `Bearer ${await bearerFor(built, opened, owner)}`, 'content-type': 'application/json' };
  const made = await fetch(`http://127.0.0.1:${serverPort}/api/v1/jobs`, { method: 'POST', headers: api, body: JSON.stringify({ name: 'Triage', promptTemplate: 'Triage issue {{ data.number }}', triggers: [{ type: 'invocation', description: 'Labels an issue.', inputSchema: { type: 'object', required: ['number'], properties: { number: { type: 'integer', minimum: 1 } } } }] }) });
  if (made.status !== 201) throw new Error(`POST /api/v1/jobs answered ${made.status}: ${await made.text()}`);
  const job = await made.json();
  const invoked = await fetch(`http://127.0.0.1:${serverPort}/api/v1/jobs/${job.id}/invocations`, { method: 'POST', headers: api, body: JSON.stringify({ data: { number: 1 } }) });
  if (invoked.status !== 202) throw new Error(`invoking the job answered ${invoked.status}: ${await invoked.text()}`);

  let failed = 0;
  for (const scenario of scenarios) {
    if ((await run(tools.node, [tools.suite, 'server', '--url', `http://127.0.0.1:${proxyPort}/mcp`, '--scenario', scenario, '--output-dir', path.join(dir, 'results')])) !== 0) failed++;
  }
  console.log(`\nMCP conformance (${SUITE.name}@${SUITE.version}): ${scenarios.length - failed} of ${scenarios.length} server scenarios passed (${scenarios.join(', ')}); not applicable: ${Object.keys(NOT_APPLICABLE).length}.`);
  server.close();
  proxy.close();
  await built.queue.stop();
  await built.runner.shutdown();
  await opened.db.$disconnect();
  rmSync(dir, { recursive: true, force: true });
  process.exit(failed ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
