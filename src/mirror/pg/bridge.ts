// A synchronous call into a worker thread that does asynchronous work. MirrorStore and MirrorReader are
// synchronous (SQLite is), and every engine calls them so: the pull, the listener's hook, `card list`, the
// import and the query worker. The PostgreSQL client is asynchronous, so a store on PostgreSQL keeps its
// connections in a thread of its own and blocks on each call: the calling thread posts the call on a
// MessagePort, sleeps in Atomics.wait on a SharedArrayBuffer until the worker says a reply is there, and takes
// it at once with receiveMessageOnPort (no event loop turn needed).
// Hand-written rather than synckit: synckit keeps one worker per module file for the whole process, shared by
// every caller, and that worker reads the process's environment; here each store has its own thread, holding
// its own connections, started with the run's environment (PGPASSWORD and the like), and ended by close().
import { type MessagePort, MessageChannel, parentPort, receiveMessageOnPort, Worker, workerData } from 'node:worker_threads';
import { CardboardError } from '../../errors.js';
import { fromWire, toWire, type WireError } from '../../thread-errors.js';

/** How long a call waits for its answer by default before the thread is given up: far past any statement's time, short of forever. */
export const CALL_TIMEOUT_MS = 10 * 60_000;

/** What the calling thread posts: one call. */
interface Call {
  method: string;
  args: unknown[];
}

/** What the worker posts: a call's value or error, or its own end (a crash, an exit) whenever it comes. */
type Reply = { type: 'value'; value: unknown } | { type: 'error'; error: WireError } | { type: 'dead'; reason: string; error?: WireError };

/** What the worker is started with: its module, the job for its `open`, the port its calls come on and the word it notifies. */
interface ThreadData {
  file: string;
  job: unknown;
  port: MessagePort;
  /** One Int32: the replies posted so far (a death counts as one); the worker adds one after each, then wakes the caller. */
  flag: SharedArrayBuffer;
}

/** The worker's operations, each asynchronous; `close` is called last and ends the thread. */
export type Handlers = Record<string, (...args: never[]) => Promise<unknown>>;

/** How a thread is started: where it points (shown in its errors: never holds a secret) and its bound per call. */
export interface SyncThreadOptions {
  location: string;
  timeoutMs?: number;
}

/**
 * The worker's first code: it loads the worker module, and tells the caller when that fails (a module not
 * built, an error as it loads), which would otherwise end the thread before serveSync could say anything, and
 * leave the caller waiting for the whole bound. Dynamic imports only: the code is read as CommonJS or as a
 * module depending on the process's own flags (--input-type).
 */
const BOOT = `
import('node:worker_threads').then(({ workerData }) =>
  import(workerData.file).catch((err) => {
    workerData.port.postMessage({ type: 'dead', reason: 'it could not start: ' + (err && err.message) });
    const word = new Int32Array(workerData.flag);
    Atomics.add(word, 0, 1);
    Atomics.notify(word, 0);
  }),
);
`;

/** The calling side: one worker thread, called synchronously. */
export class SyncThread {
  /** Set once the thread is gone: every later call throws it. */
  private dead: Error | undefined;
  private closed = false;

  private constructor(
    private readonly worker: Worker,
    private readonly port: MessagePort,
    private readonly flag: Int32Array,
    private readonly location: string,
    private readonly timeoutMs: number,
  ) {}

  /**
   * Start the worker module `file` (which calls serveSync) with `job` and the environment `env` as its
   * process.env. The worker is unref'd: a run that forgets close() still ends. `open` is the first call.
   */
  static start(file: URL, job: unknown, env: Record<string, string | undefined>, options: SyncThreadOptions): SyncThread {
    const { port1, port2 } = new MessageChannel();
    const flag = new SharedArrayBuffer(4);
    const data: ThreadData = { file: file.href, job, port: port2, flag };
    const worker = new Worker(BOOT, { eval: true, workerData: data, transferList: [port2], env: definedOnly(env) });
    worker.unref();
    // Whatever the worker says outside a call (its death while idle) waits on the port for the next call.
    port1.unref();
    return new SyncThread(worker, port1, new Int32Array(flag), options.location, options.timeoutMs ?? CALL_TIMEOUT_MS);
  }

  /** Run `method` with `args` in the worker and return its value, or throw its error as it was thrown there. */
  call<T>(method: string, ...args: unknown[]): T {
    if (this.dead !== undefined) throw this.dead;
    if (this.closed) throw new Error(`the thread of the mirror at ${this.location} was closed`);
    // A death while no call ran: its notice is waiting.
    const early = receiveMessageOnPort(this.port)?.message as Reply | undefined;
    if (early !== undefined) throw this.fail(early);
    const before = Atomics.load(this.flag, 0);
    const call: Call = { method, args };
    this.port.postMessage(call);
    // The worker's wake-up for the previous reply may come late, after its count was read here: a wake with the
    // count unchanged is that one, and the wait goes on (so the bound may be waited twice, never more).
    for (;;) {
      const woke = Atomics.wait(this.flag, 0, before, this.timeoutMs);
      if (Atomics.load(this.flag, 0) !== before) break;
      if (woke === 'timed-out') throw this.fail({ type: 'dead', reason: `no answer in ${seconds(this.timeoutMs)}` });
    }
    const reply = receiveMessageOnPort(this.port)?.message as Reply | undefined;
    if (reply === undefined) throw this.fail({ type: 'dead', reason: 'it woke the caller with no answer' });
    if (reply.type === 'value') return reply.value as T;
    if (reply.type === 'error') throw fromWire(reply.error);
    throw this.fail(reply);
  }

  /** The thread's end as the error of this and every later call; the worker is ended. */
  private fail(reply: Reply): Error {
    if (reply.type !== 'dead') return new Error(`the thread of the mirror at ${this.location} answered outside a call`);
    const cause = reply.error === undefined ? undefined : fromWire(reply.error);
    this.dead = new CardboardError(`The connection to the mirror at ${this.location} was lost: its thread stopped (${reply.reason}).`, {
      hint: 'Run the command again; with --verbose for the cause.',
      cause,
    });
    void this.worker.terminate();
    return this.dead;
  }

  /** Call `close` in the worker (when it is alive) and end the thread. Errors of the close are thrown after the end. */
  close(): void {
    if (this.closed) return;
    try {
      if (this.dead === undefined) this.call('close');
    } finally {
      this.closed = true;
      this.port.close();
      void this.worker.terminate();
    }
  }
}

/** A bound as said: whole seconds, or milliseconds below one. */
function seconds(ms: number): string {
  return ms < 1000 ? `${ms}ms` : `${Math.round(ms / 1000)}s`;
}

/** `env` without its unset names (a Worker takes strings only). */
function definedOnly(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

/**
 * The worker's side: `open(job)` runs first (the call `open`) and gives the operations every later call runs,
 * one at a time, by name. Each reply is posted, then the caller woken. An error reaches the caller as the error
 * it is (its class, hint and exit code); the worker's own crash or exit reaches it as a lost connection.
 */
export function serveSync(open: (job: unknown) => Promise<Handlers>): void {
  if (parentPort === null) throw new Error('serveSync runs in a worker thread');
  const { job, port, flag } = workerData as ThreadData;
  const word = new Int32Array(flag);
  let handlers: Handlers | undefined;
  let ended = false;
  const post = (reply: Reply) => {
    if (ended) return;
    port.postMessage(reply);
    Atomics.add(word, 0, 1);
    Atomics.notify(word, 0);
  };
  const die = (reason: string, err?: unknown) => {
    post({ type: 'dead', reason, ...(err === undefined ? {} : { error: toWire(err) }) });
    ended = true;
  };
  process.on('uncaughtException', (err) => {
    die(`an error no call caught: ${err instanceof Error ? err.message : String(err)}`, err);
    process.exit(1);
  });
  process.on('unhandledRejection', (err) => {
    die(`an error no call caught: ${err instanceof Error ? err.message : String(err)}`, err);
    process.exit(1);
  });
  process.on('exit', (code) => die(`it exited with code ${code}`));
  port.on('message', (call: Call) => {
    void (async () => {
      try {
        let value: unknown;
        if (call.method === 'open') handlers = await open(job);
        else if (call.method !== 'close' || handlers !== undefined) {
          const fn = handlers?.[call.method];
          if (fn === undefined) throw new Error(`no operation ${call.method} in the mirror's thread${handlers === undefined ? ' (not open)' : ''}`);
          value = await fn(...(call.args as never[]));
        }
        post({ type: 'value', value });
        if (call.method === 'close') {
          ended = true;
          port.close();
        }
      } catch (err) {
        post({ type: 'error', error: toWire(err) });
      }
    })();
  });
}
