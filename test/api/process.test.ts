// The process itself, as `npm start` runs it: it serves, stops cleanly on SIGTERM, and refuses to pretend
// when its port is taken.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sqliteTemplate } from '../support/databases';

const ROOT = path.join(__dirname, '../..');
const dir = mkdtempSync(path.join(tmpdir(), 'flows-process-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Exit {
  code: number | null;
  output: string;
}

/** Starts src/main.ts on a copy of the migrated template database; `until` decides when to stop it. */
function start(port: number, until?: (output: string) => boolean): Promise<Exit> {
  const database = path.join(dir, `${port}.db`);
  copyFileSync(sqliteTemplate, database);
  const child = spawn(process.execPath, ['-r', './test/support/register-ts.js', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: `file:${database}`, FLOWS_SECRET_KEY: 'b'.repeat(64), LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk;
    if (until?.(output)) child.kill('SIGTERM');
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const deadline = setTimeout(() => child.kill('SIGKILL'), 25_000);
  return new Promise((resolve) => child.on('exit', (code) => (clearTimeout(deadline), resolve({ code, output }))));
}

async function occupiedPort(): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

it('exits 1 naming the port when the port is in use, and never claims to listen', async () => {
  const busy = await occupiedPort();
  try {
    const { port } = busy.address() as AddressInfo;
    const { code, output } = await start(port);
    expect(code).toBe(1);
    expect(output).toContain(`port ${port} on 127.0.0.1 is already in use`);
    expect(output).not.toContain('is listening');
  } finally {
    busy.close();
  }
});

it('serves, then stops with exit code 0 on SIGTERM', async () => {
  const probe = await occupiedPort();
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  let ready: Promise<number> | undefined;
  const exit = await start(port, (output) => {
    if (!ready && output.includes('is listening')) ready = fetch(`http://127.0.0.1:${port}/readyz`).then((res) => res.status);
    return output.includes('"path":"/readyz"');
  });
  expect(await ready).toBe(200);
  expect(exit.code).toBe(0);
  expect(exit.output).toContain('shutting down');
  // On a database with no owner, the first-start hint stands apart from the JSON lines.
  expect(exit.output).toContain(`\n  No owner exists yet. Create the first one, then sign in at http://localhost:${port}/login:\n\n    npm run owner:create -- --email you@example.com --password '<at least 10 characters>'\n`);
});

it('stops whole on SIGTERM to `npm start`: npm passes it on, and no server is left running', async () => {
  const probe = await occupiedPort();
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  const database = path.join(dir, `npm-${port}.db`);
  copyFileSync(sqliteTemplate, database);
  // In a process group of its own, so that whatever npm started can be looked for once it has exited.
  const npm = spawn('npm', ['start'], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: `file:${database}`, FLOWS_SECRET_KEY: 'c'.repeat(64), LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const listening = new Promise<void>((resolve) => {
    const collect = (chunk: Buffer) => {
      output += chunk;
      if (output.includes('is listening')) resolve();
    };
    npm.stdout.on('data', collect);
    npm.stderr.on('data', collect);
  });
  const exited = new Promise<number | null>((resolve) => npm.on('exit', resolve));
  const deadline = setTimeout(() => process.kill(-npm.pid!, 'SIGKILL'), 110_000);
  try {
    await Promise.race([listening, exited]);
    expect(output).toContain('is listening');
    npm.kill('SIGTERM');
    await exited;
    // The server had its SIGTERM: it shut down, and nothing of the group answers any more.
    for (const until = Date.now() + 15_000; Date.now() < until && groupAlive(npm.pid!); ) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(groupAlive(npm.pid!)).toBe(false);
    expect(output).toContain('shutting down');
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  } finally {
    clearTimeout(deadline);
    if (groupAlive(npm.pid!)) process.kill(-npm.pid!, 'SIGKILL');
  }
}, 120_000);

function groupAlive(pgid: number) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
