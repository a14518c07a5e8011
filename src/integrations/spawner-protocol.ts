// What the server and its spawner process (spawner.ts, spawner-process.ts) say to each other over one
// socket: frames of a 4-byte length, a 4-byte header length, a JSON header and the raw bytes of a payload
// (a chunk of a child's output, or of its input). Raw bytes rather than Node's IPC messages: output stays
// binary without base64 or a structured clone, and the socket's own 'drain' gives backpressure. This module
// loads nothing but Node's Buffer: the spawner process imports it, and it must stay small.

/** How a child's descriptor is wired: `in` written by the server, `out` read by it, or not at all. */
export type StdioKind = 'in' | 'out' | 'ignore';

export interface SpawnRequest {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  detached?: boolean;
  uid?: number;
  gid?: number;
  stdio: StdioKind[];
}

/** The parts of a Node error a caller reads (`code` ENOENT, EACCES…); never the spawn's arguments. */
export interface ErrorShape {
  message: string;
  code?: string;
  errno?: number;
  syscall?: string;
  path?: string;
}

/** From the server: start a child, write to or end one of its `in` descriptors, signal it. */
export type Request =
  | ({ t: 'spawn'; id: number } & SpawnRequest)
  | { t: 'write'; id: number; fd: number }
  | { t: 'end'; id: number; fd: number }
  | { t: 'kill'; id: number; signal: NodeJS.Signals };

/**
 * From the spawner, in the order it saw them: a child started (`spawned`), its output (`data`), its events.
 * `thrown`: spawn threw (nothing started); `error`: a child that could not be started, as Node reports it.
 */
export type Report =
  | { t: 'spawned'; id: number; pid: number }
  | { t: 'data'; id: number; fd: number }
  | { t: 'error' | 'thrown'; id: number; error: ErrorShape }
  | { t: 'exit' | 'close'; id: number; code: number | null; signal: NodeJS.Signals | null };

export function encodeFrame(message: Request | Report, payload?: Buffer): Buffer {
  const header = Buffer.from(JSON.stringify(message));
  const frame = Buffer.allocUnsafe(8 + header.length + (payload?.length ?? 0));
  frame.writeUInt32LE(frame.length - 4, 0);
  frame.writeUInt32LE(header.length, 4);
  header.copy(frame, 8);
  payload?.copy(frame, 8 + header.length);
  return frame;
}

/**
 * A reader of frames: feed it the socket's chunks, it calls `onFrame` for each whole frame. A frame larger
 * than a chunk is gathered in a list and joined once it is complete, not copied again at every chunk.
 */
export function frameReader<T>(onFrame: (message: T, payload: Buffer) => void): (chunk: Buffer) => void {
  let chunks: Buffer[] = [];
  let length = 0;
  return (chunk) => {
    chunks.push(chunk);
    length += chunk.length;
    while (length >= 4) {
      if (chunks[0].length < 4) chunks = [Buffer.concat(chunks, length)];
      const size = chunks[0].readUInt32LE(0);
      if (length < 4 + size) return;
      const all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length);
      const headerLength = all.readUInt32LE(4);
      const message = JSON.parse(all.toString('utf8', 8, 8 + headerLength)) as T;
      const payload = all.subarray(8 + headerLength, 4 + size);
      const rest = all.subarray(4 + size);
      [chunks, length] = rest.length ? [[rest], rest.length] : [[], 0];
      onFrame(message, payload);
    }
  };
}

/** An error as it crossed the socket, made an Error again for the caller. */
export function errorFrom(shape: ErrorShape): NodeJS.ErrnoException {
  return Object.assign(new Error(shape.message), { code: shape.code, errno: shape.errno, syscall: shape.syscall, path: shape.path });
}

export function shapeOf(err: unknown): ErrorShape {
  const { message, code, errno, syscall, path } = err as NodeJS.ErrnoException;
  return { message: String(message), code, errno, syscall, path };
}
