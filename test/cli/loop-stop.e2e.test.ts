// A script that runs cardboard in a loop stops at the first Ctrl-C. A shell waiting for a command that
// Ctrl-C interrupted stops its script only if the command died by SIGINT ("wait and cooperative exit"):
// one that exits 130 has, for bash, caught the signal and chosen to carry on, and the loop went on to its
// next iteration, creating cards after the user asked to stop. So cardboard, once it has cleaned up, ends
// by the signal it was stopped by. Real shells (bash, xargs) over the built binary against the emulator,
// which rate limits every request after the first: each `card put` after it waits out a 429 (Retry-After
// 60 s), the moment a user presses Ctrl-C.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { boardLockPath, serverIdentity } from '../../src/import/board-lock.js';
import { BIN, CHILD_KILL_MS, childEnv, tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator } from '../helpers/emulator.js';
import { startCommandOnPty } from '../helpers/pty.js';
import { startLocalServer } from '../helpers/receiver.js';
import { nameCounts, spawnCli, start, until, writeCards } from '../import/helpers.js';

const running = new Set<ChildProcess>();
let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  running.clear();
  for (const c of cleanups) await c();
  cleanups = [];
});

/** Six iterations, `rl1`…`rl6`: the loop of the report. */
const NAMES = ['rl1', 'rl2', 'rl3', 'rl4', 'rl5', 'rl6'];

/**
 * The emulator with one request a minute (a burst of one): every request after the first is answered 429
 * (the first is the schema's GET or a POST, depending on what the run has cached).
 */
const rateLimited = () => start({ rateLimit: { perMinute: 1, burst: 1 } });

function boardEnv(emu: RunningEmulator): Record<string, string> {
  return { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: emu.boards[BOARD_ID]!.token };
}

/** The names the POSTs carried, in the order they reached the server (a 429 answered one included). */
function postedNames(emu: RunningEmulator): string[] {
  return emu.requests().filter((r) => r.method === 'POST').map((r) => String((r.body as { Name?: unknown }).Name));
}

/** The iteration that is waiting out a 429: the last name posted, once a POST of it was answered 429. */
function waitingOn(emu: RunningEmulator): string | undefined {
  const last = emu.requests().filter((r) => r.method === 'POST').at(-1);
  return last?.status === 429 ? String((last.body as { Name?: unknown }).Name) : undefined;
}

/** Whether a POST of an iteration after `name` reached the server: the loop went on. */
const wentOn = (emu: RunningEmulator, name: string) => postedNames(emu).some((n) => NAMES.indexOf(n) > NAMES.indexOf(name));

/** Resolves with how `child` ended, or with 'went on' as soon as a later iteration posted (the old bug, no 60 s wait). */
async function endOrNext(ended: Promise<unknown>, emu: RunningEmulator, name: string): Promise<unknown> {
  let end: { value: unknown } | undefined;
  void ended.then((value) => (end = { value }));
  await until(() => end !== undefined || wentOn(emu, name), `the run to end or an iteration after ${name} to post`);
  return end ? end.value : 'went on';
}

/** `bash -c script` with the built binary as "$0" "$1" (`"$0" "$1" card put …` runs cardboard), its own process group. */
function bash(script: string, env: Record<string, string>): { child: ChildProcess; ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>; stdout: () => string; stderr: () => string } {
  const child = spawn('bash', ['-c', script, process.execPath, BIN], { env: childEnv({ env }), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
  const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_KILL_MS);
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    }),
  );
  return { child, ended, stdout: () => out, stderr: () => err };
}

const LOOP = `for i in ${NAMES.map((n) => n.slice(2)).join(' ')}; do "$0" "$1" card put Name=rl$i; echo "rl$i: $?"; done; echo "loop finished"`;

describe('a shell loop of `card put` stops at the first Ctrl-C', () => {
  it('on a terminal: ^C during a 429 wait ends cardboard and the loop; no later POST reaches the server', async () => {
    const emu = await rateLimited();
    const term = startCommandOnPty(['bash', '-c', LOOP, process.execPath, BIN], { ...boardEnv(emu), NO_COLOR: '1' });
    await term.waitFor(/Rate limited \(429\); waiting/);
    await until(() => waitingOn(emu) !== undefined);
    const waiting = waitingOn(emu)!;
    term.type('\u0003');
    const end = await endOrNext(term.ended, emu, waiting);
    // bash, in the terminal's foreground with cardboard, got the Ctrl-C too: cardboard died by it, so bash
    // ends the loop and dies by it as well (the relay reports that death); nothing after the loop ran.
    expect(end, term.raw()).toEqual({ code: null, signal: 'SIGINT' });
    expect(term.raw()).toMatch(/error: Interrupted/);
    expect(term.raw()).not.toMatch(new RegExp(`${waiting}: |loop finished`));
    expect(postedNames(emu)).toEqual(NAMES.slice(0, NAMES.indexOf(waiting) + 1));
    const names = [...nameCounts(emu).keys()];
    expect(names).not.toContain(waiting);
    expect(names.every((n) => NAMES.indexOf(n) < NAMES.indexOf(waiting))).toBe(true);
  });

  it('in a script, SIGINT to its process group (what a terminal sends): the loop stops, bash dies by it', async () => {
    const emu = await rateLimited();
    const run = bash(LOOP, boardEnv(emu));
    await until(() => waitingOn(emu) !== undefined);
    const waiting = waitingOn(emu)!;
    process.kill(-run.child.pid!, 'SIGINT');
    expect(await endOrNext(run.ended, emu, waiting), run.stderr()).toEqual({ code: null, signal: 'SIGINT' });
    expect(postedNames(emu)).toEqual(NAMES.slice(0, NAMES.indexOf(waiting) + 1));
    expect(run.stdout()).not.toMatch(new RegExp(`${waiting}: |loop finished`));
  });

  it.each([
    ['SIGINT', 2],
    ['SIGTERM', 15],
  ] as const)('xargs stops when cardboard alone is sent %s: it was killed by the signal (xargs exits 125)', async (signal, number) => {
    const emu = await rateLimited();
    const pids = join(tempDir(), 'pids');
    // `exec`: the pid written is cardboard's own.
    const script = `printf '%s\\n' ${NAMES.join(' ')} | xargs -I{} sh -c 'echo $$ >> "$0"; exec "$1" "$2" card put Name="$3"' ${JSON.stringify(pids)} "$0" "$1" {}; echo "xargs: $?"`;
    const run = bash(script, boardEnv(emu));
    await until(() => waitingOn(emu) !== undefined);
    const waiting = waitingOn(emu)!;
    await until(() => existsSync(pids) && readFileSync(pids, 'utf8').trim().split('\n').length === NAMES.indexOf(waiting) + 1);
    process.kill(Number(readFileSync(pids, 'utf8').trim().split('\n').at(-1)), signal);
    expect(await endOrNext(run.ended, emu, waiting), run.stderr()).toEqual({ code: 0, signal: null });
    expect(run.stderr()).toContain(`terminated by signal ${number}`);
    expect(run.stdout()).toContain('xargs: 125');
    expect(postedNames(emu)).toEqual(NAMES.slice(0, NAMES.indexOf(waiting) + 1));
  });

  it("SIGTERM to cardboard alone: the shell's $? is 143 (128 + 15), and bash reports the command Terminated, as for a death", async () => {
    const emu = await rateLimited();
    const pids = join(tempDir(), 'pids');
    const run = bash(`sh -c 'echo $$ > "$0"; exec "$1" "$2" card put Name=x' ${JSON.stringify(pids)} "$0" "$1"; echo "status=$?"`, boardEnv(emu));
    await until(() => waitingOn(emu) !== undefined && existsSync(pids));
    process.kill(Number(readFileSync(pids, 'utf8').trim()), 'SIGTERM');
    expect(await run.ended, run.stderr()).toEqual({ code: 0, signal: null });
    expect(run.stdout()).toBe('status=143\n');
    // bash names a death by SIGTERM on stderr; an exit with 143 it does not.
    expect(run.stderr()).toMatch(/Terminated/);
  });
});

/** A CSV of `n` cards; the import of it runs through the emulator's 100 ms delay per request. */
function importArgs(n: number, dir: string): string[] {
  return ['import', writeCards(n, 'sig'), '--concurrency', '2', '--journal', join(dir, 'j.log'), '--results', join(dir, 'results.csv'), '--rejects', join(dir, 'rejects.csv')];
}

describe('an import stopped by a signal writes its summary, journal and results, then ends by the signal', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('%s', async (signal) => {
    const emu = await start({ faults: 'delay:100ms' });
    const dir = tempDir();
    const run = spawnCli(emu, importArgs(200, dir));
    await until(() => emu.state()[BOARD_ID]!.cards.length >= 6);
    run.child.kill(signal);
    expect(await run.ended, run.output().stderr).toEqual({ code: null, signal });
    const { stderr } = run.output();
    const done = Number(/error: Interrupted after (\d+) rows?\./.exec(stderr)?.[1]);
    expect(done, stderr).toBeGreaterThan(0);
    expect(stderr).toMatch(/^created +\d+$/m);
    expect(stderr).toContain('hint: Run the same command again to resume');
    // Every row that ended is in the results file and in the journal, written before the process ended.
    const results = readFileSync(join(dir, 'results.csv'), 'utf8').trim().split('\n');
    expect(results.length - 1).toBe(done);
    expect(readFileSync(join(dir, 'j.log'), 'utf8').length).toBeGreaterThan(0);
  });

  it('a second Ctrl-C while it drains ends it at once, by SIGINT, and its lock goes with it', async () => {
    // Rows held by a server that never answers: the first Ctrl-C waits for them (2 s grace), the second does not.
    const held = await holdingServer();
    cleanups.push(() => held.close());
    const dir = tempDir();
    const env = { CARDBOARD_BASE_URL: held.url, CARDBOARD_BOARD: 'b1', CARDBOARD_TOKEN: 'tok-held-0123' };
    const child = spawn(process.execPath, [BIN, ...importArgs(20, dir)], { env: childEnv({ env }), stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
    await until(() => held.posts() >= 2);
    const lock = boardLockPath(await serverIdentity(held.url), 'b1');
    expect(existsSync(lock)).toBe(true);
    child.kill('SIGINT');
    await until(() => stderr.includes('Interrupted: finishing the requests in flight'));
    child.kill('SIGINT');
    expect(await ended, stderr).toEqual({ code: null, signal: 'SIGINT' });
    // No summary: the second Ctrl-C does not wait for anything. The lock was deleted by the exit hooks.
    expect(stderr).not.toMatch(/Interrupted after/);
    expect(existsSync(lock)).toBe(false);
  });
});

/** A server that answers the schema and holds every other request, never answering it. */
async function holdingServer(): Promise<{ url: string; posts: () => number; close(): Promise<void> }> {
  let posts = 0;
  const local = await startLocalServer((req, res) => {
    if (req.method === 'GET' && req.url?.endsWith('/schema')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([{ name: 'Name' }, { name: 'Status' }, { name: 'Owner' }, { name: 'Priority' }]));
      return;
    }
    if (req.method === 'POST') posts++;
    req.resume();
  });
  return { url: local.url, posts: () => posts, close: local.close };
}
