// An import run (src/import/run.ts) in process against the emulator: what it reads of time comes from the
// run's clock, never from the process's.
import { appendFileSync, copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMain, tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, startTestEmulator, TOKEN } from '../helpers/emulator.js';
import { skippingClock } from '../helpers/sim.js';

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startTestEmulator();
});
afterAll(async () => {
  await emu.close();
});

const env = () => ({ CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN });

describe('import run', () => {
  it("waits for a killed run's requests in flight until its timeout has passed on the run's clock", async () => {
    const dir = tempDir();
    const input = join(dir, 'in.csv');
    writeFileSync(input, 'Name,Status\nrun-clock-a,Open\nrun-clock-b,Open\n');
    const journal = join(dir, 'j.log');
    const first = await runMain(['import', input, '--journal', journal], { env: env(), cwd: dir });
    expect(first.code, first.stderr).toBe(0);
    // As if a run had been killed with a request in flight: it may land up to its --timeout (30 s) from now.
    appendFileSync(journal, `3\tsending\t\t${'f'.repeat(16)}\n`);
    copyFileSync(journal, join(dir, 'ahead.log'));
    const run = async (path: string, aheadMs: number) => {
      const r = await runMain(['import', input, '--journal', path], { env: env(), cwd: dir, context: skippingClock(aheadMs).context });
      expect(r.stderr).toMatch(/^1 row may have been applied/m);
      return r.stderr;
    };
    // The run's clock at the real time: the wait is said.
    expect(await run(journal, 0)).toMatch(/^Waiting 30s for requests of an earlier run that may still land/m);
    // The run's clock an hour on: that timeout has passed, nothing to wait for.
    expect(await run(join(dir, 'ahead.log'), 3_600_000)).not.toMatch(/^Waiting/m);
  });
});
