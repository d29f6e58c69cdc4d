// Ctrl-C ends every command, by SIGINT once it has cleaned up (a shell reports 130), whatever it is
// waiting for: stdin (on a real terminal), a 429 with `Retry-After: 50`, a server that never answers. For
// each wait the built binary is spawned and sent a real SIGINT once it is seen waiting; every other command
// runs in this process and gets the same SIGINT from a signal source the test fires. The time to end is
// checked against a budget far below what the wait would take (50 s, the 30 s timeout), never a tight one,
// so a busy machine cannot fail it.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import type { SignalSource, StopSignal } from '../../src/interrupt.js';
import { runToEnd } from '../../src/main.js';
import { BIN, childEnv, tempDir } from '../helpers/cli.js';
import { hostileEnv, type HostileServer, useHostileServer } from '../helpers/hostile-server.js';
import { startOnPty } from '../helpers/pty.js';
import { waitFor } from '../helpers/wait.js';
import { BufferStream } from '../io/buffers.js';

const hostile = useHostileServer(afterEach);

/** Far below the waits interrupted (50 s, 30 s), far above a loaded machine's exit (measured: well under 1 s). */
const EXIT_BUDGET_MS = 8000;

interface Started {
  stdout(): string;
  stderr(): string;
  /** Resolves once `check` holds, polling; rejects if the process exits first. */
  until(check: () => boolean, what: string): Promise<void>;
  /** Send SIGINT; resolves with the exit code and the milliseconds it took to exit. */
  interrupt(): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
}

/** Spawn the binary with stdin an open pipe that never ends (nothing piped, no EOF). */
function start(args: string[], env: Record<string, string>): Started {
  const child = spawn(process.execPath, [BIN, ...args], { env: childEnv({ configDir: tempDir(), env }), stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal });
    }),
  );
  let done = false;
  void exited.then(() => (done = true));
  return {
    stdout: () => out,
    stderr: () => err,
    until: (check, what) => waitFor(check, { what, intervalMs: 25, failWhen: () => done && `exited (stderr:\n${err})` }),
    async interrupt() {
      const at = performance.now();
      child.kill('SIGINT');
      const end = await exited;
      return { ...end, ms: performance.now() - at };
    },
  };
}

/**
 * The same run in this process (runToEnd) with a signal source the test fires: how each command's waits
 * take the stop, without a process per command. It ends as the binary would before it ends by the signal
 * (code 130, naming SIGINT; test/cli/exit-by-signal.test.ts shows the binary's death by it).
 */
function startInProcess(args: string[], env: Record<string, string>): Started {
  const stdout = new BufferStream(false);
  const stderr = new BufferStream(false);
  let fire: ((s: StopSignal) => void) | undefined;
  const signals: SignalSource = {
    listen: (listener) => ((fire = listener), () => (fire = undefined)),
    exitNow: (s) => {
      throw new Error(`exitNow(${s}): a second signal, which the test never sends`);
    },
  };
  // stdin an open stream that never ends, as the spawned binary's pipe.
  const ended = runToEnd(args, { stdout, stderr, stdin: new PassThrough(), env: childEnv({ configDir: tempDir(), env }), signals });
  let done = false;
  void ended.finally(() => (done = true));
  return {
    stdout: () => stdout.text,
    stderr: () => stderr.text,
    until: (check, what) => waitFor(check, { what, intervalMs: 25, failWhen: () => done && `ended (stderr:\n${stderr.text})` }),
    async interrupt() {
      const at = performance.now();
      fire!('SIGINT');
      const end = await ended;
      return { code: end.code, signal: end.signal ?? null, ms: performance.now() - at };
    },
  };
}

/** How a run stopped by Ctrl-C ends: the binary by SIGINT itself, a run in process with 130 and the signal named. */
const BY_SIGINT = { spawned: { code: null, signal: 'SIGINT' }, 'in process': { code: 130, signal: 'SIGINT' } } as const;

/**
 * A server that reads requests but never answers them (with `answerSchema`, but for the schema: an import
 * then reaches its rows); counts the requests it holds.
 */
async function silentServer(answerSchema = false): Promise<{ url: string; requests: () => number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let requests = 0;
  const server: Server = createServer((req, res) => {
    if (answerSchema && req.method === 'GET' && req.url?.endsWith('/schema')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([{ name: 'Title' }, { name: 'Status' }]));
      return;
    }
    requests++;
    req.resume();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

let silent: Awaited<ReturnType<typeof silentServer>> | undefined;
afterEach(async () => {
  await silent?.close();
  silent = undefined;
});

function csv(): string {
  const file = join(tempDir(), 'rows.csv');
  writeFileSync(file, `Title,Status\n${Array.from({ length: 40 }, (_, i) => `row ${i},Open`).join('\n')}\n`);
  return file;
}

/** The commands of each family as they talk to the service: one request each, or an import of 40 rows. */
const REQUESTS: Array<[string, (s: { boardId: string }) => string[]]> = [
  ['card put', () => ['card', 'put', 'Title=x']],
  ['card get', () => ['card', 'get', 'card0001']],
  ['card list --all', () => ['card', 'list', '--all', '--format', 'ndjson']],
  ['comment', () => ['comment', 'card0001', 'hello']],
  ['schema', () => ['schema', '--refresh']],
  ['import', () => ['import', csv(), '--journal', join(tempDir(), 'j.log')]],
];

/** Each command in process, and the first also as the spawned binary sent a real SIGINT. */
const RUNS = REQUESTS.flatMap(([name, args], i) => [
  ...(i === 0 ? [[name, 'spawned', args] as const] : []),
  [name, 'in process', args] as const,
]);
const starter = (how: keyof typeof BY_SIGINT) => (how === 'spawned' ? start : startInProcess);

describe('Ctrl-C ends every command at once, by SIGINT', () => {
  it.each(RUNS)('%s (%s), while waiting out a 429 with Retry-After: 50', async (_name, how, args) => {
    const s: HostileServer = await hostile('huge-retry-after', { retryAfter: '50', cards: [{ _id: 'card0001', Title: 't', Status: 'Open' }] });
    const run = starter(how)(args(s), hostileEnv(s));
    await run.until(() => /Rate limited \(429\); waiting/.test(run.stderr()) || /waiting/i.test(run.stderr()) || s.requests.length > 0, 'the first 429');
    await run.until(() => s.requests.length > 0, 'a request');
    const end = await run.interrupt();
    expect({ code: end.code, signal: end.signal }, run.stderr()).toEqual(BY_SIGINT[how]);
    expect(end.ms).toBeLessThan(EXIT_BUDGET_MS);
    expect(run.stderr()).toMatch(/Interrupted/);
    expect(run.stderr()).not.toMatch(/at .*\.js:\d+/); // no stack trace
  });

  it.each(RUNS)('%s (%s), while a server never answers', async (_name, how, args) => {
    silent = await silentServer();
    const run = starter(how)(args({ boardId: 'b1' }), { CARDBOARD_BASE_URL: silent.url, CARDBOARD_BOARD: 'b1', CARDBOARD_TOKEN: 'tok-silent-0123' });
    await run.until(() => silent!.requests() > 0, 'a request reached the server');
    const end = await run.interrupt();
    expect({ code: end.code, signal: end.signal }, run.stderr()).toEqual(BY_SIGINT[how]);
    expect(end.ms).toBeLessThan(EXIT_BUDGET_MS);
    expect(run.stderr()).toMatch(/Interrupted/);
  });

  it('import (spawned): the first Ctrl-C takes no new row, cuts requests in flight off after its grace, and prints the summary', async () => {
    // The schema is answered; the rows are held in flight for ever.
    silent = await silentServer(true);
    const journal = join(tempDir(), 'j.log');
    const env = { CARDBOARD_BASE_URL: silent.url, CARDBOARD_BOARD: 'b1', CARDBOARD_TOKEN: 'tok-silent-0123' };
    const run = start(['import', csv(), '--journal', journal, '--concurrency', '4'], env);
    await run.until(() => silent!.requests() >= 4, 'four rows in flight');
    const end = await run.interrupt();
    expect({ code: end.code, signal: end.signal }, run.stderr()).toEqual({ code: null, signal: 'SIGINT' });
    expect(end.ms).toBeLessThan(EXIT_BUDGET_MS);
    // No new row was sent after the Ctrl-C: the four in flight were all.
    expect(silent.requests()).toBe(4);
    expect(run.stderr()).toMatch(/Interrupted: finishing the requests in flight for up to 2s/);
    // Cut off after the grace, they may have been applied: uncertain, and the journal says so for the next run.
    expect(run.stderr()).toMatch(/^uncertain +4$/m);
    expect(run.stderr()).toMatch(/^uncertain lines: 2, 3, 4, 5$/m);
    expect(run.stderr()).toMatch(/Run the same command again to resume/);
  });
});

describe('Ctrl-C while a command waits on stdin, typed on a real terminal', () => {
  it.each([
    ['card put --data -', ['card', 'put', '--data', '-']],
    ['comment ID -', ['comment', 'card0001', '-']],
    ['import -', ['import', '-']],
    ['board add --token-stdin', ['board', 'add', 'w', '--url', 'http://127.0.0.1:9/api/aptlet/b1', '--token-stdin']],
    ['webhook listen --signing-key-stdin', ['webhook', 'listen', '--port', '0', '--signing-key-stdin']],
  ])('%s: ^C ends it by SIGINT', async (_name, args) => {
    const s = await hostile('plain');
    const pty = startOnPty(args, { ...hostileEnv(s), CARDBOARD_SIGNING_KEY: 'sk-pty-0123456' });
    await pty.waitFor(/Reading from stdin; end with Ctrl-D/);
    const at = performance.now();
    pty.type('\u0003');
    expect(await pty.ended, pty.raw()).toEqual({ code: null, signal: 'SIGINT' });
    expect(performance.now() - at).toBeLessThan(EXIT_BUDGET_MS);
    expect(pty.raw()).toMatch(/Interrupted/);
  });
});
