import { type ChildProcess, spawn } from 'node:child_process';
import { openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { realClock } from '../../src/clock.js';
import { BIN, childEnv, type RunOptions, tempDir } from '../helpers/cli.js';
import { onTestFinished } from 'vitest';
import { BOARD_ID, type RunningEmulator, startTestEmulator } from '../helpers/emulator.js';
import { waitFor } from '../helpers/wait.js';

/** Start a test emulator for this test; it is closed when the test finishes. */
export async function start(opts: Parameters<typeof startTestEmulator>[0] = {}): Promise<RunningEmulator> {
  const emu = await startTestEmulator(opts);
  onTestFinished(() => emu.close());
  return emu;
}

/**
 * For an in-process run under faults whose checks do not depend on how long it waits between tries: the
 * clock's jitter draws from the lowest tenth of its range, so each backoff is at most a tenth of its ceiling.
 * The floor of a 429 or 503 (a second) and every Retry-After are kept; times and sleeps are the real ones.
 */
export const lowJitter: RunOptions = { context: () => ({ clock: { ...realClock, random: () => realClock.random() / 10 } }) };

/** A CSV of `n` cards named `<prefix>-<i>` (header Name,Status,Owner,Priority), written to a fresh temp dir. */
export function writeCards(n: number, prefix: string, eol = '\n'): string {
  const lines = ['Name,Status,Owner,Priority'];
  for (let i = 1; i <= n; i++) lines.push(`${prefix}-${i},Open,"Owner, ${i}",P${i % 3}`);
  const file = join(tempDir('cardboard-import-'), `${prefix}.csv`);
  writeFileSync(file, lines.join(eol) + eol);
  return file;
}

/** Card names on a board with how many cards carry each. */
export function nameCounts(emu: RunningEmulator, board = BOARD_ID): Map<string, number> {
  const counts = new Map<string, number>();
  for (const card of emu.state()[board]!.cards) counts.set(String(card.Name), (counts.get(String(card.Name)) ?? 0) + 1);
  return counts;
}

/** The --results file as records. */
export function readResults(path: string): { line: string; state: string; _id: string; message: string; settled: string }[] {
  return parse(readFileSync(path), { columns: true }) as { line: string; state: string; _id: string; message: string; settled: string }[];
}

/** POSTs the emulator received. */
export function posts(emu: RunningEmulator): number {
  return emu.requests().filter((r) => r.method === 'POST').length;
}

/** Spawn the built CLI (for kill -9 / SIGINT tests), env pointed at the emulator. */
export function spawnCli(
  emu: RunningEmulator,
  args: string[],
  stdinFile?: string,
  board = BOARD_ID,
  env: Record<string, string> = {},
): {
  child: ChildProcess;
  output: () => { stdout: string; stderr: string };
  /** The exit code; null when a signal ended the process (it ends by the SIGINT or SIGTERM that stopped it). */
  exit: Promise<number | null>;
  /** The exit code, or the signal that ended the process. */
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
} {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: childEnv({ env: { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: board, CARDBOARD_TOKEN: emu.boards[board]!.token, ...env } }),
    stdio: [stdinFile === undefined ? 'ignore' : openSync(stdinFile, 'r'), 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stdout!.on('data', (b: string) => (stdout += b));
  child.stderr!.on('data', (b: string) => (stderr += b));
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return { child, output: () => ({ stdout, stderr }), exit: ended.then((e) => e.code), ended };
}

/** Resolve once `check` holds, looking every 20 ms; fails at waitFor's deadline naming `what` (default: the check's source). */
export function until(check: () => boolean, what?: string): Promise<void> {
  return waitFor(check, { what, intervalMs: 20 });
}
