// A process started by the spawner process (spawner.ts), as this server sees it: the ChildProcess surface
// its users need, fed by the spawner's reports. Output is pushed into a stream per descriptor as it comes;
// 'error', 'exit' and 'close' are emitted one after the other, each after what came before it was delivered,
// and never before the caller that awaited the spawn had its turn to listen.
import { EventEmitter } from 'node:events';
import { Readable, Writable } from 'node:stream';
import { errorFrom, type Report, type Request, type StdioKind } from './spawner-protocol';

export interface SpawnedProcess {
  /** Undefined when the process could not be started: an 'error' event follows. */
  readonly pid?: number;
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  /** Each descriptor: a Writable for `in`, a Readable for `out`, null for `ignore`. */
  readonly stdio: readonly (Readable | Writable | null | undefined)[];
  kill(signal?: NodeJS.Signals): boolean;
  on(event: 'error', listener: (err: NodeJS.ErrnoException) => void): this;
  on(event: 'exit' | 'close', listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
}

/** A process the spawner started, as this server sees it. */
export class RemoteProcess extends EventEmitter implements SpawnedProcess {
  pid: number | undefined;
  readonly stdio: (Readable | Writable | null)[];
  /** Events are emitted one after the other, each once what came before it was delivered. */
  private emitted = Promise.resolve();
  private settle: { resolve(process: RemoteProcess): void; reject(err: Error): void } | null;

  constructor(
    private readonly id: number,
    kinds: StdioKind[],
    private readonly detached: boolean,
    private readonly send: (request: Request, payload?: Buffer) => void,
    settle: RemoteProcess['settle'],
  ) {
    super();
    this.settle = settle;
    this.stdio = kinds.map((kind, fd) => (kind === 'in' ? this.input(fd) : kind === 'out' ? new Readable({ read() {} }) : null));
  }

  get stdin() {
    return this.stdio[0] as Writable | null;
  }
  get stdout() {
    return this.stdio[1] as Readable | null;
  }
  get stderr() {
    return this.stdio[2] as Readable | null;
  }

  kill(signal: NodeJS.Signals = 'SIGTERM') {
    this.send({ t: 'kill', id: this.id, signal });
    return true;
  }

  private input(fd: number) {
    return new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        this.send({ t: 'write', id: this.id, fd }, chunk);
        done();
      },
      final: (done) => {
        this.send({ t: 'end', id: this.id, fd });
        done();
      },
    });
  }

  /** A report of the spawner about this process; answers whether the process is over. */
  take(report: Report, payload: Buffer): boolean {
    switch (report.t) {
      case 'spawned':
        this.pid = report.pid;
        this.started();
        return false;
      case 'data':
        (this.stdio[report.fd] as Readable | null)?.push(payload);
        return false;
      case 'thrown':
        this.settle?.reject(errorFrom(report.error));
        return true;
      case 'error':
        this.started();
        this.failed(errorFrom(report.error));
        this.flush();
        return false;
      case 'exit':
        this.later(() => this.emit('exit', report.code, report.signal));
        this.flush();
        return false;
      case 'close':
        this.closed(report.code, report.signal);
        return true;
    }
  }

  /** The spawner ended before the process did: it fails, and whatever it started goes too. */
  lost(why: string) {
    if (this.settle) return this.settle.reject(new Error(`the process spawner ended (${why}) before the process started`));
    if (this.pid) {
      try {
        process.kill(this.detached ? -this.pid : this.pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    this.failed(new Error(`the process spawner ended (${why}); the process was stopped`));
    this.flush();
    this.closed(null, 'SIGKILL');
  }

  /**
   * 'error' once someone listens for it: a spawner lost while the caller still awaits something else (the
   * sandbox's control group) must not throw an unheard 'error' in this server. What follows waits for it.
   */
  private failed(err: Error) {
    this.emitted = this.emitted.then(() =>
      this.listenerCount('error')
        ? undefined
        : new Promise<void>((heard) => {
            const listening = (event: string | symbol) => event === 'error' && (this.off('newListener', listening), setImmediate(heard));
            this.on('newListener', listening);
          }),
    );
    this.later(() => this.emit('error', err));
  }

  /** Output nobody reads is dropped once the process is over, as Node does, so that 'close' comes. */
  private flush() {
    this.later(() => {
      for (const stream of this.stdio) if (stream instanceof Readable && stream.readableFlowing === null) stream.resume();
    });
  }

  private started() {
    this.settle?.resolve(this);
    this.settle = null;
  }

  /** Emitted after the caller's own continuation (it listens by then) and after output already pushed. */
  private later(emit: () => void) {
    this.emitted = this.emitted.then(
      () =>
        new Promise<void>((done) =>
          setImmediate(() => {
            try {
              emit();
            } finally {
              done();
            }
          }),
        ),
    );
  }

  /** 'close' once every output stream has been read to its end, as Node's own. */
  private closed(code: number | null, signal: NodeJS.Signals | null) {
    const outputs = this.stdio.filter((stream): stream is Readable => stream instanceof Readable);
    for (const output of outputs) output.push(null);
    this.emitted = this.emitted
      .then(() => Promise.all(outputs.map((output) => (output.closed ? null : new Promise((done) => output.once('close', done))))))
      .then(() => void this.emit('close', code, signal));
  }
}
