import { afterEach, describe, expect, it } from 'vitest';
import { FaultSpecError, parseFaults } from '../../src/emulator/faults.js';
import { BOARD_ID, CREATE_NEW_BOARD_ID, CREATE_NEW_TOKEN, type RunningEmulator, startTestEmulator, TOKEN } from '../helpers/emulator.js';
import { call } from './http.js';

let emu: RunningEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

const put = (e: RunningEmulator, body: unknown = { Name: 'A' }) => call(e, 'POST', `/api/aptlet/${BOARD_ID}`, { token: TOKEN, body });
const stored = (e: RunningEmulator) => e.state()[BOARD_ID]!.cards.length;

describe('rate limit (per token: burst, then perMinute/60 a second)', () => {
  it('answers 429 with Retry-After in whole seconds after the burst, per token, storing nothing', async () => {
    emu = await startTestEmulator({ rateLimit: { perMinute: 6, burst: 3 } });
    for (let i = 0; i < 3; i++) expect((await put(emu)).status).toBe(200);
    const r = await put(emu);
    expect(r.status).toBe(429);
    expect(r.json).toEqual({ reason: 'Rate limit exceeded. Try again shortly.' });
    const retryAfter = r.headers.get('retry-after')!;
    expect(retryAfter).toMatch(/^\d+$/);
    // 6/min refills one request every 10 s.
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(9);
    expect(Number(retryAfter)).toBeLessThanOrEqual(10);
    expect(stored(emu)).toBe(3);
    const other = await call(emu, 'POST', `/api/aptlet/${CREATE_NEW_BOARD_ID}`, { token: CREATE_NEW_TOKEN, body: { Name: 'B' } });
    expect(other.status).toBe(200);
  });
});

describe('faults', () => {
  it('503:1 answers 503 with Retry-After: 1 and stores nothing', async () => {
    emu = await startTestEmulator({ faults: '503:1' });
    const r = await put(emu);
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('1');
    expect(stored(emu)).toBe(0);
  });

  it('500-after:1 stores the card, then answers 500', async () => {
    emu = await startTestEmulator({ faults: '500-after:1' });
    const r = await put(emu, { Name: 'kept' });
    expect(r.status).toBe(500);
    expect(r.json).toEqual({ error: 'Internal Server Error' });
    expect(emu.state()[BOARD_ID]!.cards.map((c) => c.Name)).toEqual(['kept']);
  });

  it('reset:1 drops the connection without an answer and stores nothing', async () => {
    emu = await startTestEmulator({ faults: 'reset:1' });
    await expect(put(emu)).rejects.toThrow();
    expect(stored(emu)).toBe(0);
    expect(emu.requests().map((r) => r.status)).toEqual([0]);
  });

  it('reset-after:1 stores the card, then drops the connection', async () => {
    emu = await startTestEmulator({ faults: 'reset-after:1' });
    await expect(put(emu)).rejects.toThrow();
    expect(stored(emu)).toBe(1);
  });

  it('delay:200ms holds each answer at least that long', async () => {
    emu = await startTestEmulator({ faults: 'delay:200ms' });
    const start = performance.now();
    expect((await put(emu)).status).toBe(200);
    expect(performance.now() - start).toBeGreaterThanOrEqual(195);
  });

  it('setFaults() replaces the faults at run time and undefined clears them', async () => {
    emu = await startTestEmulator();
    emu.setFaults('503:1');
    expect((await put(emu)).status).toBe(503);
    emu.setFaults(undefined);
    expect((await put(emu)).status).toBe(200);
    expect(() => emu!.setFaults('nope:1')).toThrow(FaultSpecError);
  });

  it('POST /__emulator/faults changes the faults; a bad spec is a 400', async () => {
    emu = await startTestEmulator();
    expect((await call(emu, 'POST', '/__emulator/faults', { body: { faults: '503:1' } })).status).toBe(200);
    expect((await put(emu)).status).toBe(503);
    const bad = await call(emu, 'POST', '/__emulator/faults', { body: { faults: '503:2' } });
    expect(bad.status).toBe(400);
    expect((await put(emu)).status).toBe(503);
    await call(emu, 'POST', '/__emulator/faults', { body: { faults: null } });
    expect((await put(emu)).status).toBe(200);
  });

  it('the same faultSeed gives the same sequence of outcomes', async () => {
    const run = async (seed: number) => {
      const e = await startTestEmulator({ faults: '503:0.5', faultSeed: seed });
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) statuses.push((await put(e)).status);
      await e.close();
      return statuses;
    };
    const a = await run(42);
    expect(await run(42)).toEqual(a);
    expect(new Set(a)).toEqual(new Set([200, 503]));
  });
});

describe('parseFaults', () => {
  it('reads every kind', () => {
    expect(parseFaults('503:0.05,500-after:0.02,reset:0.02,reset-after:0.01,delay:1.5s')).toEqual({
      unavailable: 0.05,
      errorAfter: 0.02,
      reset: 0.02,
      resetAfter: 0.01,
      delayMs: 1500,
    });
    expect(parseFaults('delay:200ms').delayMs).toBe(200);
    expect(parseFaults('')).toEqual({ unavailable: 0, errorAfter: 0, reset: 0, resetAfter: 0, delayMs: 0 });
  });

  it.each(['503', '503:1.5', '503:-1', 'boom:0.1', 'delay:fast', 'reset:'])('rejects %s', (spec) => {
    expect(() => parseFaults(spec)).toThrow(FaultSpecError);
  });
});
