// The spawner process: a small Node process that starts the server's children (its sandboxed agents)
// so that the server, a large process, never forks itself per run (a fork copies the page tables of the
// whole process and the event loop waits for the exec). It loads Node's own modules and the protocol only.
// It reads requests from the socket on descriptor 3, relays each child's output and events back in the
// order it sees them, and ends when that socket closes: when the server closes it, or when the server is
// gone, however it went. Its children are in process groups of their own (`detached`), so the server
// signals them directly; sandboxes end with it (bubblewrap's --die-with-parent).
import { spawn, type ChildProcess } from 'node:child_process';
import { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { encodeFrame, frameReader, shapeOf, type Report, type Request } from './spawner-protocol';

/** Output waiting for the server beyond this much pauses every child's output until it has been taken. */
const MAX_UNSENT = 1024 * 1024;

const channel = new Socket({ fd: 3, readable: true, writable: true });
const children = new Map<number, ChildProcess>();
/** Every output stream of every child, paused together while the server is behind. */
const outputs = new Set<Readable>();
let paused = false;

function report(message: Report, payload?: Buffer) {
  channel.write(encodeFrame(message, payload));
  if (!paused && channel.writableLength > MAX_UNSENT) {
    paused = true;
    for (const output of outputs) output.pause();
  }
}

channel.on('drain', () => {
  paused = false;
  for (const output of outputs) output.resume();
});

function start(request: Extract<Request, { t: 'spawn' }>) {
  const { id, file, args, env, cwd, detached, uid, gid, stdio } = request;
  let child: ChildProcess;
  try {
    child = spawn(file, args, { env, cwd, detached, uid, gid, stdio: stdio.map((kind) => (kind === 'ignore' ? 'ignore' : 'pipe')) });
  } catch (err) {
    return report({ t: 'thrown', id, error: shapeOf(err) });
  }
  children.set(id, child);
  // Known at once when the fork succeeded; a child that could not be started (ENOENT, EACCES) says so in
  // an 'error' event instead, as Node reports it.
  if (child.pid !== undefined) report({ t: 'spawned', id, pid: child.pid });
  stdio.forEach((kind, fd) => {
    const stream = child.stdio[fd] as (Readable & Writable) | null;
    if (!stream) return;
    stream.on('error', () => {}); // a child that does not read its input, or is gone
    if (kind !== 'out') return;
    outputs.add(stream);
    if (paused) stream.pause();
    stream.on('data', (chunk: Buffer) => report({ t: 'data', id, fd }, chunk));
    stream.on('close', () => outputs.delete(stream));
  });
  child.on('error', (err) => report({ t: 'error', id, error: shapeOf(err) }));
  child.on('exit', (code, signal) => report({ t: 'exit', id, code, signal }));
  child.on('close', (code, signal) => {
    children.delete(id);
    report({ t: 'close', id, code, signal });
  });
}

function handle(request: Request, payload: Buffer) {
  if (request.t === 'spawn') return start(request);
  const child = children.get(request.id);
  if (!child) return; // over already, or never started
  if (request.t === 'kill') child.kill(request.signal);
  else {
    const input = child.stdio[request.fd] as Writable | null;
    if (request.t === 'write') input?.write(payload);
    else input?.end();
  }
}

channel.on('data', frameReader<Request>(handle));
channel.on('end', () => process.exit(0));
channel.on('error', () => process.exit(0));
// A terminal's ^C or a service manager's SIGTERM goes to the server, which ends its runs and then this
// process (by closing the socket); were this process to go first, those runs would lose their output.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});
// What this process handles is the agents' environment: a failure says no more than its kind.
process.on('uncaughtException', (err) => {
  process.stderr.write(`flows spawner: ${err.name}${(err as NodeJS.ErrnoException).code ? ` ${(err as NodeJS.ErrnoException).code}` : ''}\n`);
  process.exit(70);
});
process.title = 'flows-spawner';
