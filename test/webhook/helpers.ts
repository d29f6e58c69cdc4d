import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { expect } from 'vitest';
import { BIN, childEnv, type RunOptions } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, startTestEmulator, TEST_BOARDS } from '../helpers/emulator.js';
import { within } from '../helpers/wait.js';

/** A spawned `cardboard` child process, its output collected as it comes. */
export interface RunningCli {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolve once stdout/stderr contains text matching `re`. */
  waitFor(re: RegExp, stream?: 'stdout' | 'stderr'): Promise<void>;
  /**
   * Send a signal and wait for the end: the exit code, or (code null) the signal the process ended by; a
   * run stopped by SIGINT or SIGTERM ends by it once it has cleaned up.
   */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

/** A `webhook listen` child process, started and ready (its first stderr line was read). */
export interface RunningListener extends RunningCli {
  url: string;
}

/** Spawn the built `cardboard …args` with stdin from `opts.input`; output is decoded as UTF-8 as it comes. */
export function spawnCli(args: string[], opts: RunOptions = {}): RunningCli {
  const child = spawn(process.execPath, [BIN, ...args], { env: childEnv(opts), stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiters: Array<() => void> = [];
  const poke = () => {
    for (const w of waiters.splice(0)) w();
  };
  // setEncoding: a chunk boundary inside a multi-byte character ('↳', '…') is decoded whole.
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (b: string) => {
    out += b;
    poke();
  });
  child.stderr.on('data', (b: string) => {
    err += b;
    poke();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  child.stdin.end(opts.input ?? '');
  const waitFor = async (re: RegExp, stream: 'stdout' | 'stderr' = 'stderr') => {
    let closed = false;
    void exited.then(() => {
      closed = true;
      poke();
    });
    const seen = async () => {
      while (!re.test(stream === 'stdout' ? out : err)) {
        if (closed) throw new Error(`cardboard ${args[0] ?? ''} exited before ${re}: ${err}`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    };
    await within(seen(), { what: () => `${re} on the ${stream} of cardboard ${args.slice(0, 2).join(' ')}; it has:\n${stream === 'stdout' ? out : err}` });
  };
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    waitFor,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return { ...(await exited), stdout: out, stderr: err };
    },
  };
}

/** Spawn the built `cardboard webhook listen --port 0 …args` and wait for the "Listening on" line. */
export async function startListener(args: string[], opts: RunOptions = {}): Promise<RunningListener> {
  const cli = spawnCli(['webhook', 'listen', '--port', '0', ...args], opts);
  await cli.waitFor(/Listening on (\S+)/);
  return { ...cli, url: /Listening on (\S+)/.exec(cli.stderr())![1]! };
}

/** POST a body with an optional x-signingKey; resolves with the status. */
export async function post(url: string, body: string | Buffer, key?: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'x-signingKey': key }), ...headers } });
  await res.body.dump();
  return res.statusCode;
}

/** One request as the test app received it. */
export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** A stand-in for the developer's app: records each request, answers `status` after `delayMs`; can go down and up. */
export class TestApp {
  readonly received: Received[] = [];
  status = 200;
  delayMs = 0;
  /** The n-th answer (from 1) and the request it answers, when given; else `status` with a JSON body `{"got":n}`. */
  answer: ((n: number, req: Received) => { status: number; headers: Record<string, string>; body: string | Buffer }) | undefined;
  /** Number of answers fully sent. */
  completed = 0;
  /** Number of requests fully read (before the delay): the one being answered is counted. */
  arrived = 0;
  port = 0;
  private server: Server | undefined;
  private waiters: Array<() => void> = [];

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  /** Listen (again) on the same port, or a free one the first time. */
  async up(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.arrived++;
        for (const w of this.waiters.splice(0)) w();
        setTimeout(() => {
          const got = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
          this.received.push(got);
          const a = this.answer?.(this.received.length, got) ?? { status: this.status, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ got: this.received.length }) };
          res.writeHead(a.status, a.headers).end(a.body, () => {
            this.completed++;
            for (const w of this.waiters.splice(0)) w();
          });
        }, this.delayMs);
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stop listening and drop connections: forwards now fail with ECONNREFUSED. */
  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  /** Resolve once `n` requests were read. */
  waitForArrived(n: number): Promise<void> {
    return within(this.observe(() => this.arrived >= n), { what: () => `${n} requests to arrive at the test app (${this.arrived} did)` });
  }

  /** Resolve once `n` answers were completed. */
  waitForCompleted(n: number): Promise<void> {
    return within(this.observe(() => this.completed >= n), { what: () => `${n} answers from the test app (${this.completed} sent)` });
  }

  /** Resolve once `cond` holds, looking again at each request read and each answer sent. */
  private async observe(cond: () => boolean): Promise<void> {
    while (!cond()) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
}

/** Work a test's afterEach undoes, last first. */
export type Cleanup = Array<() => Promise<unknown>>;

/** `webhook listen` (the built binary) with the signing key in its environment, killed at cleanup if it still runs. */
export async function keyedListener(args: string[], key: string, cleanup: Cleanup, env: Record<string, string> = {}): Promise<RunningListener> {
  const l = await startListener(args, { env: { CARDBOARD_SIGNING_KEY: key, ...env } });
  cleanup.push(async () => {
    if (l.child.exitCode === null) await l.stop('SIGKILL');
  });
  return l;
}

/** A TestApp that is up, taken down at cleanup. */
export async function upApp(cleanup: Cleanup): Promise<TestApp> {
  const a = new TestApp();
  await a.up();
  cleanup.push(() => a.down());
  return a;
}

/** The test emulator with the test board's Webhook URL set to `url`, closed at cleanup. */
export async function emulatorPointingAt(url: string, cleanup: Cleanup): Promise<RunningEmulator> {
  const boards = structuredClone(TEST_BOARDS);
  boards[BOARD_ID]!.webhookUrl = url;
  const emu = await startTestEmulator({ boards });
  cleanup.push(() => emu.close());
  return emu;
}

/** keyedListener for a run with --inspect: `page` is the inspector's URL from its "Inspector:" line. */
export async function inspectingListener(args: string[], key: string, cleanup: Cleanup): Promise<RunningListener & { page: string }> {
  const l = await keyedListener(args, key, cleanup);
  await l.waitFor(/Inspector: (\S+)/);
  return { ...l, page: /Inspector: (\S+)/.exec(l.stderr())![1]! };
}

/** The events of an inspector's stream up to and including `ready` (the history), read with undici. */
export async function inspectorHistory(page: string): Promise<Array<{ event: string; data: Record<string, unknown> }>> {
  const res = await request(`${page}events`);
  expect(res.statusCode).toBe(200);
  let text = '';
  for await (const chunk of res.body) {
    text += (chunk as Buffer).toString('utf8');
    if (/event: ready\n.*\n\n/.test(text)) break;
  }
  res.body.destroy();
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => ({ event: /^event: (.*)$/m.exec(block)![1]!, data: JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as Record<string, unknown> }));
}
