// 40 parallel `card put` against a 120/min board once saw 18 exit 1. Scaled down: 15 processes
// against a limit of 10 requests/s with bursts of 2 (each process reads the schema, then posts) all wait
// for Retry-After, say so, and exit 0; the board has every card, once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, startTestEmulator, TOKEN } from '../helpers/emulator.js';

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startTestEmulator({ rateLimit: { perMinute: 600, burst: 2 } });
});
afterAll(async () => {
  await emu.close();
});

describe('parallel card put processes under a rate limit', () => {
  it('15 processes: every one exits 0 and every card is stored once', async () => {
    const env = { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN };
    const names = Array.from({ length: 15 }, (_, i) => `card ${i}`);
    const runs = await Promise.all(names.map((n) => runCli(['card', 'put', `Name=${n}`], { env })));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const stored = emu.state()[BOARD_ID]!.cards.map((c) => c.Name).sort();
    expect(stored).toEqual([...names].sort());
    // The limit was met, and each wait was said on stderr (never stdout: it holds the _id alone).
    const throttled = emu.requests().filter((q) => q.status === 429).length;
    expect(throttled).toBeGreaterThan(0);
    const said = runs.flatMap((r) => r.stderr.split('\n').filter((l) => /^Rate limited \(429\); waiting \d+(\.\d)?s as the service asked \(Retry-After: \d+s(, plus jitter)?\), then trying again…$/.test(l)));
    expect(said).toHaveLength(throttled);
    for (const r of runs) expect(r.stdout).toMatch(/^\S+\n$/);
  });
});
