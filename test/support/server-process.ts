// Flows as a process of its own (src/main.ts, as `npm start` runs it), on a test app's database and keys:
// for what only a process shows (kill -9, SIGTERM, several instances on one database).
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { startTestApp, type TestApp } from './app';
import { accessToken, createOwner } from './identity';

const ROOT = path.join(__dirname, '../..');

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** The instance id the process logged at start (what its runs' `ownerId` holds). */
  instanceId: string;
  /** Everything it printed so far. */
  output(): string;
  /** Resolves with the exit code once the process ended. */
  exited: Promise<number | null>;
}

/**
 * The database and an owner's API headers for server processes under test: a test app makes them and then
 * stops its work queue, so that on PostgreSQL it takes none of the servers' work (it has no local agent).
 */
export async function databaseForServers(): Promise<{ app: TestApp; headers: Record<string, string> }> {
  const app = await startTestApp();
  await app.queue.stop();
  const owner = await createOwner(app.database.db);
  return { app, headers: { authorization: `Bearer ${await accessToken(app, owner)}`, 'content-type': 'application/json' } };
}

export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

export function startServerProcess(app: TestApp, { port, env = {} }: { port: number; env?: Record<string, string> }): Promise<ServerProcess> {
  // DATABASE_URL in `env` points it elsewhere (through test/support/tcp-cut.ts, say).
  const child = spawn(process.execPath, ['-r', './test/support/register-ts.js', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: app.config.baseUrl.origin,
      DATABASE_URL: app.database.url,
      FLOWS_SECRET_KEY: app.config.secretKey.toString('hex'),
      FLOWS_RATE_LIMIT_API: '0',
      FLOWS_RATE_LIMIT_API_ADDRESS: '0',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let output = '';
  return new Promise((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error(`the server did not start:\n${output}`)), 25_000);
    const collect = (chunk: Buffer) => {
      output += chunk;
      const listening = /"instance":"(inst_[^"]+)"[^\n]*is listening/.exec(output);
      if (!listening) return;
      clearTimeout(deadline);
      resolve({ child, url: `http://127.0.0.1:${port}`, instanceId: listening[1], output: () => output, exited });
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    void exited.then(() => reject(new Error(`the server exited before listening:\n${output}`)));
  });
}
