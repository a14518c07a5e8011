// Where the CLI keeps what a login gave it, per server: the client it registered there and its tokens,
// in $XDG_CONFIG_HOME/flows/credentials.json (or ~/.config/flows), readable by the user only.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

export interface ServerCredentials {
  clientId: string;
  accessToken?: string;
  refreshToken?: string;
  /** When the access token expires, in ms since the epoch. */
  expiresAt?: number;
}

interface Store {
  /** The server commands talk to unless --url says otherwise. */
  current?: string;
  servers: Record<string, ServerCredentials>;
}

export const configDir = (env: NodeJS.ProcessEnv = process.env) => path.join(env.XDG_CONFIG_HOME || path.join(homedir(), '.config'), 'flows');
const fileOf = (env?: NodeJS.ProcessEnv) => path.join(configDir(env), 'credentials.json');

export function readStore(env?: NodeJS.ProcessEnv): Store {
  const file = fileOf(env);
  if (!existsSync(file)) return { servers: {} };
  try {
    const store = JSON.parse(readFileSync(file, 'utf8')) as Partial<Store>;
    return { ...store, servers: store.servers ?? {} };
  } catch {
    return { servers: {} };
  }
}

/** Written whole, through a temporary file, with mode 0600 in a 0700 folder. */
export function writeStore(store: Store, env?: NodeJS.ProcessEnv): void {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const temporary = `${fileOf(env)}.${process.pid}`;
  writeFileSync(temporary, `${JSON.stringify(store, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, fileOf(env));
}

export function updateServer(origin: string, change: (current: ServerCredentials | undefined) => ServerCredentials | undefined, env?: NodeJS.ProcessEnv): void {
  const store = readStore(env);
  const next = change(store.servers[origin]);
  if (next) store.servers[origin] = next;
  else delete store.servers[origin];
  writeStore(store, env);
}
