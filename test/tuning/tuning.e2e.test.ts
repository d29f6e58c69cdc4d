import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, childEnv, tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, startTestEmulator, TOKEN } from '../helpers/emulator.js';

// The V8 settings made by bin/cardboard.js (src/tuning.ts), seen from outside on the Node running the suite:
// CI runs it on Node 20, 22, 24 and 26, so each line is checked for an empty stderr and no abort.

const HOOK = fileURLToPath(new URL('./young-generation-hook.mjs', import.meta.url));
const ROWS = 20_000;
const CARDS = 12;
const MB = 1024 * 1024;

let emu: RunningEmulator;
let csv: string;

beforeAll(async () => {
  emu = await startTestEmulator({ pageSize: 5, seedCards: CARDS });
  const dir = tempDir();
  csv = join(dir, 'rows.csv');
  const lines = ['Name,Status,Owner,Priority'];
  for (let i = 1; i <= ROWS; i++) lines.push(`Card ${i}: migrate the billing export,Doing,Ada Lovelace,High`);
  writeFileSync(csv, `${lines.join('\n')}\n`);
});
afterAll(async () => {
  await emu.close();
});

/** `node [nodeArgs] bin/cardboard.js args` against the emulator; stdout, stderr and how it ended. */
function run(nodeArgs: string[], args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const childEnvVars = childEnv({ env: { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN, ...env } });
    execFile(process.execPath, [...nodeArgs, BIN, ...args], { env: childEnvVars, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
      resolve({ code, stdout, stderr });
    });
  });
}

describe('runtime tuning, seen from the entry point', () => {
  it('card list --all and import: exit 0, all the output, nothing on stderr (no V8 warning)', async () => {
    const list = await run([], ['card', 'list', '--all', '--format', 'ndjson']);
    expect(list.stderr).toBe('');
    expect(list.code).toBe(0);
    expect(list.stdout.trim().split('\n')).toHaveLength(CARDS);
    const dry = await run([], ['import', csv, '--dry-run', '--json']);
    expect(dry.stderr).toBe('');
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dryRun: true });
  });

  it('with flags frozen (node --freeze-flags-after-init) sets none instead of aborting (exit 133)', async () => {
    const r = await run(['--freeze-flags-after-init'], ['import', csv, '--dry-run', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ dryRun: true });
  });

  it('an import holds the young generation at 2 × 4 MB; CARDBOARD_NO_TUNING=1 leaves V8 to grow it', async () => {
    // Measured on the real command by a preloaded observer (young-generation-hook.mjs). Left alone, V8 grows
    // the young generation to 16–32 MB during a 20,000-row dry run on Node 20–26.
    const largest = async (env: Record<string, string>) => {
      const out = join(tempDir(), 'young');
      const r = await run(['--import', HOOK], ['import', csv, '--dry-run', '--json'], { ...env, YOUNG_GENERATION_OUT: out });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      return Number(readFileSync(out, 'utf8'));
    };
    expect(await largest({})).toBeLessThanOrEqual(8 * MB);
    expect(await largest({ CARDBOARD_NO_TUNING: '1' })).toBeGreaterThan(8 * MB);
  });
});
