// The `flows` CLI against a listening server, signed in as `flows login` leaves it: a real token of the
// server's own authorization server in a credentials file of its own, run from the sources as a child process.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { accessToken, createOwner, registerTestClient, type TestOwner } from './identity';
import { startListeningApp, type ListeningApp } from './server';

const ROOT = path.join(__dirname, '../..');

export interface CliSession {
  server: ListeningApp;
  owner: TestOwner;
  /** The bearer header of the CLI's own token, for setting things up through the API. */
  headers: Record<string, string>;
  flows(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
  close(): Promise<void>;
}

export async function startCliSession(): Promise<CliSession> {
  const config = mkdtempSync(path.join(tmpdir(), 'flows-cli-'));
  const server = await startListeningApp();
  const owner = await createOwner(server.app.database.db);
  const clientId = await registerTestClient(server.app, 'flows CLI');
  const token = await accessToken(server.app, owner, { clientId });
  mkdirSync(path.join(config, 'flows'), { recursive: true, mode: 0o700 });
  const store = { current: server.url, servers: { [server.url]: { clientId, accessToken: token, expiresAt: Date.now() + 3_600_000 } } };
  writeFileSync(path.join(config, 'flows', 'credentials.json'), JSON.stringify(store), { mode: 0o600 });
  return {
    server,
    owner,
    headers: { authorization: `Bearer ${token}` },
    flows(args) {
      const child = spawn(process.execPath, ['-r', './test/support/register-ts.js', 'clients/cli/src/main.ts', ...args], { cwd: ROOT, env: { PATH: process.env.PATH, HOME: config, XDG_CONFIG_HOME: config } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
    },
    async close() {
      await server.close();
      rmSync(config, { recursive: true, force: true });
    },
  };
}
