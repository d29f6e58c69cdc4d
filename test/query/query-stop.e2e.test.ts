// `cardboard query` stops when asked, however long SQLite computes: the statement runs in a thread of its
// own, so Ctrl-C and SIGTERM reach the run while SQLite is inside one statement that never returns a row
// (an endless recursive CTE counted), and the run ends by the signal: a shell loop running it stops too.
// The thread's connection is gone when the run ends: the process holds no handle on the mirror after it.
// What tells the statement has begun: the cardboard process holds the mirror file open (it opens it just
// before it runs the statement), read from /proc, so these run on Linux.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { BIN, childEnv, runMain, tempDir } from '../helpers/cli.js';
import { startOnPty } from '../helpers/pty.js';
import { waitFor } from '../helpers/wait.js';
import { until } from '../import/helpers.js';
import { absent, POSTGRES } from '../helpers/engines.js';
import { filledMirror } from './mirror-fixture.js';

/** One statement that computes for ever before its only row. */
const ENDLESS = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c';

/** How long a stopped run may take to end: generous (a loaded machine), and far below "never". */
const PROMPTLY_MS = 10_000;

const running = new Set<ChildProcess>();
afterEach(() => {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) killAll(child);
  running.clear();
});

/** Kill `child` and, when it leads a process group of its own, the group (a shell and the cardboard it runs). */
function killAll(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

/** The fds of process `pid` open on `file`. */
function fdsOn(pid: number | 'self', file: string): string[] {
  try {
    return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === file;
      } catch {
        return false;
      }
    });
  } catch {
    return [];
  }
}

/** The processes but this one that hold `file` open. */
function holders(file: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid)
    .map(Number)
    .filter((pid) => fdsOn(pid, file).length > 0);
}

/** How `ended` resolved, or 'still running' if it has not within PROMPTLY_MS. */
async function endsPromptly<T>(ended: Promise<T>): Promise<T | 'still running'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), PROMPTLY_MS)));
  try {
    return await Promise.race([ended, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** `child`'s end: its exit code, or the signal that killed it. */
function endOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
}

describe.runIf(process.platform === 'linux')('cardboard query stops while SQLite computes', () => {
  it('Ctrl-C on a terminal: the run ends by SIGINT, promptly', async () => {
    const { file, env } = await filledMirror();
    const term = startOnPty(['query', ENDLESS], env);
    // A run that does not stop must not outlive the test (the pty's relay does not end it).
    onTestFinished(() => {
      for (const pid of holders(file)) process.kill(pid, 'SIGKILL');
    });
    await until(() => holders(file).length > 0, 'cardboard to open the mirror');
    term.type('\u0003');
    expect(await endsPromptly(term.ended), term.raw()).toEqual({ code: null, signal: 'SIGINT' });
    expect(term.raw()).toContain('error: Interrupted.');
  });

  it('SIGTERM: the run ends by SIGTERM, promptly', async () => {
    const { file, env } = await filledMirror();
    const child = spawn(process.execPath, [BIN, 'query', ENDLESS], { env: childEnv({ env }), stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    const ended = endOf(child);
    await until(() => holders(file).includes(child.pid!), 'cardboard to open the mirror');
    child.kill('SIGTERM');
    expect(await endsPromptly(ended)).toEqual({ code: null, signal: 'SIGTERM' });
  });

  it('in a bash loop, SIGINT to its process group (what a terminal sends): the loop stops, bash dies by it', async () => {
    const { file, env } = await filledMirror();
    const loop = `for i in 1 2 3; do "$0" "$1" query "$2"; echo "query $i: $?"; done; echo "loop finished"`;
    const child = spawn('bash', ['-c', loop, process.execPath, BIN, ENDLESS], { env: childEnv({ env }), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    let stdout = '';
    child.stdout!.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    const ended = endOf(child);
    await until(() => holders(file).length > 0, 'cardboard to open the mirror');
    process.kill(-child.pid!, 'SIGINT');
    expect(await endsPromptly(ended)).toEqual({ code: null, signal: 'SIGINT' });
    expect(stdout).toBe('');
  });
});

describe.runIf(process.platform === 'linux')("cardboard query lets go of the mirror's file", () => {
  it('when the run ends, this process holds no handle on the file it read', async () => {
    // A copy of a filled mirror (with its log, if it has one): the store that filled it holds its own file
    // until its statements are collected.
    const { file: filled, env } = await filledMirror();
    const file = join(tempDir('cardboard-query-copy-'), 'board.sqlite');
    copyFileSync(filled, file);
    if (existsSync(`${filled}-wal`)) copyFileSync(`${filled}-wal`, `${file}-wal`);
    const r = await runMain(['query', 'SELECT count(*) AS n FROM cards'], { env: { ...env, CARDBOARD_MIRROR: file } });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('{"n":3}\n');
    expect(fdsOn('self', file)).toEqual([]);
  });
});

// On PostgreSQL the statement runs on the server: stopping the run must stop it there too, or the server
// would compute for ever for a run that has ended; also when the run is killed (kill -9) and can do nothing.
describe('cardboard query on PostgreSQL stops while the server computes', () => {
  if (absent(POSTGRES)) return;

  /**
   * The server's sessions of this test's run (named by the application_name it connects with: other files'
   * runs of `query` compute on the same server at the same time, and must be neither counted nor ended here)
   * that are computing, but the one asking.
   */
  const computing = async (file: string, app: string) =>
    (await POSTGRES.rows(file, "SELECT pid FROM pg_stat_activity WHERE application_name = ? AND state = 'active' AND pid <> pg_backend_pid()", [app])).flat();

  it.each(['SIGINT', 'SIGTERM', 'SIGKILL'] as const)('%s: the run ends by it, promptly, and the statement no longer runs on the server', async (signal) => {
    const location = await POSTGRES.mirror();
    const { file, env } = await filledMirror(undefined, location);
    const app = `cardboard-stop-${randomUUID()}`;
    const child = spawn(process.execPath, [BIN, 'query', ENDLESS], { env: childEnv({ env: { ...env, PGAPPNAME: app } }), stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const ended = endOf(child);
    let sessions: unknown[] = [];
    try {
      await waitFor(async () => (sessions = await computing(file, app)).length > 0 || child.exitCode !== null, { what: 'the statement to run on the server', intervalMs: 100 });
      child.kill(signal);
      expect(await endsPromptly(ended), stderr).toEqual({ code: null, signal });
      // A session left computing would still be there (another test's short statement ends soon by itself).
      await waitFor(async () => (await computing(file, app)).every((pid) => !sessions.includes(pid)), { what: 'the server to stop the statement', timeoutMs: PROMPTLY_MS, intervalMs: 100 });
    } finally {
      // Whatever the outcome, no statement of this test computes on after it (nor holds up its schema's drop).
      await POSTGRES.rows(file, 'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = ANY(?)', [sessions]);
    }
  });
});
