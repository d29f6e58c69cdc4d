// What the `mirror pull` tests share: the environment of a run against the emulator or the alternative
// server, the boards' cards to compare with the mirror's (test/helpers/mirror.ts reads those with python3's
// sqlite3), and writes to the emulator over HTTP while a pull walks its pages.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { BIN, childEnv, tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, TOKEN } from '../helpers/emulator.js';
import type { AltServer } from '../conformance/alt-server.js';

/** A fresh mirror file's path (CARDBOARD_MIRROR), in a directory of its own. */
export function mirrorFile(): string {
  return join(tempDir('cardboard-mirror-'), 'board.sqlite');
}

/** The environment of a run against the emulator's test board, with its mirror at `file`. */
export function emuEnv(emu: RunningEmulator, file: string): Record<string, string> {
  return { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN, CARDBOARD_MIRROR: file };
}

/** The environment of a run against the alternative server's board, with its mirror at `file`. */
export function altEnv(alt: AltServer, file: string): Record<string, string> {
  return { CARDBOARD_BASE_URL: alt.url, CARDBOARD_BOARD: alt.opts.boardId, CARDBOARD_TOKEN: alt.opts.token, CARDBOARD_MIRROR: file };
}

/** Cards by `_id` (the server's list, for a comparison with mirrorCards). */
export function byId(cards: readonly Record<string, unknown>[]): Record<string, Record<string, unknown>> {
  return Object.fromEntries(cards.map((c) => [String(c._id), { ...c }]));
}

/** The emulator test board's cards by `_id`. */
export function serverCards(emu: RunningEmulator): Record<string, Record<string, unknown>> {
  return byId(emu.state()[BOARD_ID]!.cards);
}

/**
 * POST a card to the emulator's test board (spec 4.3), trying again on a fault (an update by `_id` repeats
 * harmlessly; a create tried again may make a second card, which the server's state then holds).
 */
export async function postCard(emu: RunningEmulator, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await fetch(`${emu.url}/api/aptlet/${BOARD_ID}`, { method: 'POST', headers: { 'x-token': TOKEN, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (res.ok) return (await res.json()) as Record<string, unknown>;
    } catch {
      // A reset: try again.
    }
    if (attempt >= 20) throw new Error('the emulator did not take the card');
  }
}

/** A spawned `cardboard …` with `env` (in `cwd`: the default, this process's), its output collected as it comes. */
export function spawnWith(args: string[], env: Record<string, string>, configDir = tempDir(), cwd?: string): {
  child: ChildProcess;
  output: () => { stdout: string; stderr: string };
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
} {
  const child = spawn(process.execPath, [BIN, ...args], { env: childEnv({ configDir, env }), stdio: ['ignore', 'pipe', 'pipe'], ...(cwd === undefined ? {} : { cwd }) });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stdout!.on('data', (s: string) => (stdout += s));
  child.stderr!.on('data', (s: string) => (stderr += s));
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return { child, output: () => ({ stdout, stderr }), ended };
}
