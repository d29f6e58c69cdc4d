// The record file's durability (RecordFile): a delivery's line is written before its 200, and fdatasync
// follows after the 200s, group-committed and at most once per sync interval, so an OS crash can only take
// the lines of the last interval. What reaches the disk cannot be seen from a test, so fs.fdatasync is
// watched: each call's file and the file's size at that moment, its completion held until the test lets it
// go (or, in simulated time, given in the next turn).
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { Clock } from '../../src/clock.js';
import { Listener } from '../../src/webhook/listener.js';
import { RecordFile } from '../../src/webhook/record-file.js';
import { tempDir } from '../helpers/cli.js';
import { simClock } from '../helpers/sim.js';
import { post } from './helpers.js';

interface SyncCall {
  fd: number;
  /** The file's size when fdatasync was called: what it makes durable. */
  size: number;
  /** When it was called, on `clock` (simulated time); absent without one. */
  at?: number;
}

/**
 * Watch fs.fdatasync for this test (the ESM binding src/ imports follows the spy); `release` completes the
 * held calls. With a clock, each call is noted with its time and completes in the next turn, held by nothing:
 * time in a simulation only moves when nothing else is left to run, so a real sync would race it.
 */
function watchFdatasync(clock?: Clock): { calls: SyncCall[]; release(): void } {
  const real = fs.fdatasync;
  const calls: SyncCall[] = [];
  const held: Array<() => void> = [];
  const spy = vi.spyOn(fs, 'fdatasync').mockImplementation((fd: number, callback: fs.NoParamCallback) => {
    const size = fs.fstatSync(fd).size;
    if (clock === undefined) {
      calls.push({ fd, size });
      held.push(() => real(fd, callback));
    } else {
      calls.push({ fd, size, at: clock.now() });
      setImmediate(() => callback(null));
    }
  });
  syncBuiltinESMExports();
  onTestFinished(() => {
    for (const go of held.splice(0)) go();
    spy.mockRestore();
    syncBuiltinESMExports();
  });
  return { calls, release: () => held.splice(0).forEach((go) => go()) };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));
const delivery = (id: string) => ({ receivedAt: '2026-01-02T03:04:05.678Z', method: 'POST', path: '/', headers: { 'content-type': 'application/json' }, body: Buffer.from(`{"_id":"${id}"}`) });

describe('the record file is synced to disk', () => {
  it('once per burst, in the turn after the appends (not in their way), covering every line of the burst', async () => {
    const sync = watchFdatasync();
    // No interval: each burst is synced as soon as the one before has ended (the interval is tested below).
    const record = new RecordFile(join(tempDir(), 'r.jsonl'), { syncIntervalMs: 0 });
    onTestFinished(() => record.close());
    record.append(delivery('a'));
    record.appendAll([delivery('b'), delivery('c')]);
    // Written already (before any 200 could go out), not yet synced: the sync does not delay the answers.
    expect(fs.readFileSync(record.path, 'utf8').split('\n').filter(Boolean)).toHaveLength(3);
    expect(sync.calls).toEqual([]);
    await turn();
    expect(sync.calls).toEqual([{ fd: record['fd'], size: record.size }]);
    sync.release();
    await record.flush();
    // A later burst gets its own sync.
    record.append(delivery('d'));
    await turn();
    expect(sync.calls).toHaveLength(2);
    expect(sync.calls[1]).toEqual({ fd: record['fd'], size: record.size });
    sync.release();
  });

  it('flush() and close() resolve only once fdatasync has completed for everything appended', async () => {
    const sync = watchFdatasync();
    const record = new RecordFile(join(tempDir(), 'r.jsonl'), { syncIntervalMs: 0 });
    record.append(delivery('a'));
    let flushed = false;
    const flushing = record.flush().then(() => (flushed = true));
    for (let i = 0; i < 5; i++) await turn();
    expect(sync.calls).toEqual([{ fd: record['fd'], size: record.size }]);
    expect(flushed).toBe(false);
    sync.release();
    await flushing;
    // Appended while nothing is in flight: close() syncs it before closing.
    record.append(delivery('b'));
    let closed = false;
    const closing = record.close().then(() => (closed = true));
    for (let i = 0; i < 5; i++) await turn();
    expect(closed).toBe(false);
    expect(sync.calls.at(-1)).toEqual({ fd: record['fd'], size: record.size });
    sync.release();
    await closing;
  });

  it('after a delivery over HTTP: the 200 does not wait for the disk, and the sync that follows covers its line', async () => {
    const sync = watchFdatasync();
    const record = new RecordFile(join(tempDir(), 'r.jsonl'));
    const listener = new Listener({ host: '127.0.0.1', port: 0, path: '/', key: 'sk-sync', maxBody: 1024 * 1024, record, onEvent: () => {} });
    const url = await listener.start();
    onTestFinished(() => {
      sync.release();
      return listener.stop();
    });
    // Every fdatasync is held: the 200 still comes.
    expect(await post(url, '{"_id":"durable"}', 'sk-sync')).toBe(200);
    const size = fs.statSync(record.path).size;
    expect(fs.readFileSync(record.path, 'utf8')).toContain('"_id":"durable"');
    // Started in the turn that wrote the line or the next (event-loop turns, not time: no clock involved).
    const covered = () => sync.calls.some((c) => c.fd === record['fd'] && c.size >= size);
    for (let i = 0; i < 3 && !covered(); i++) await turn();
    expect(covered(), JSON.stringify(sync.calls)).toBe(true);
  });
});

describe('the sync interval (simulated time)', () => {
  const INTERVAL = 100;

  it('a burst within the interval ends in exactly one sync, when the interval runs out, covering all of it', async () => {
    const clock = simClock();
    const sync = watchFdatasync(clock);
    const record = new RecordFile(join(tempDir(), 'r.jsonl'), { syncIntervalMs: INTERVAL, clock });
    const fd = record['fd'];
    await clock.run(
      (async () => {
        // After a quiet spell the first delivery is synced in the next turn.
        record.append(delivery('first'));
        const first = record.size;
        await clock.sleep(5);
        expect(sync.calls).toEqual([{ fd, size: first, at: 0 }]);
        // A burst from 10 to 90 ms: nothing more is synced until 100 ms after the last sync started.
        for (let t = 10; t <= 90; t += 10) {
          await clock.sleep(10);
          record.append(delivery(`burst-${t}`));
          expect(sync.calls).toHaveLength(1);
        }
        const burst = record.size;
        await clock.sleep(400);
        expect(sync.calls).toEqual([
          { fd, size: first, at: 0 },
          { fd, size: burst, at: INTERVAL },
        ]);
        // Quiet since: the next delivery is synced at once again.
        record.append(delivery('later'));
        await clock.sleep(1);
        expect(sync.calls.at(-1)).toEqual({ fd, size: record.size, at: 495 });
        await record.close();
      })(),
    );
    expect(sync.calls).toHaveLength(3);
  });

  it('under a steady stream, one sync per interval, each covering every line appended before it started', async () => {
    const clock = simClock();
    const sync = watchFdatasync(clock);
    const record = new RecordFile(join(tempDir(), 'r.jsonl'), { syncIntervalMs: INTERVAL, clock });
    /** When each line was written, and the size once it was. */
    const written: { at: number; size: number }[] = [];
    await clock.run(
      (async () => {
        for (let i = 0; i < 200; i++) {
          record.append(delivery(`steady-${i}`));
          written.push({ at: clock.now(), size: record.size });
          await clock.sleep(5);
        }
        await clock.sleep(INTERVAL);
      })(),
    );
    const starts = sync.calls.map((c) => c.at!);
    expect(starts).toEqual(Array.from({ length: 11 }, (_, i) => i * INTERVAL));
    // The durability window: every line is covered by a sync started within the interval after it was written.
    for (const line of written) {
      const covering = sync.calls.find((c) => c.size >= line.size)!;
      expect(covering.at! - line.at).toBeLessThanOrEqual(INTERVAL);
    }
    expect(sync.calls.at(-1)!.size).toBe(record.size);
    await record.close();
  });

  it('close() syncs what is pending at once, without waiting for the interval, and leaves no timer behind', async () => {
    const clock = simClock();
    const sync = watchFdatasync(clock);
    const record = new RecordFile(join(tempDir(), 'r.jsonl'), { syncIntervalMs: 1000, clock });
    const fd = record['fd'];
    let closedAt = -1;
    let first = -1;
    await clock.run(
      (async () => {
        record.append(delivery('a'));
        first = record.size;
        await clock.sleep(10);
        record.append(delivery('b'));
        await clock.sleep(10);
        expect(sync.calls).toHaveLength(1);
        await record.close();
        closedAt = clock.now();
      })(),
    );
    expect(closedAt).toBe(20);
    expect(sync.calls).toEqual([
      { fd, size: first, at: 0 },
      { fd, size: fs.statSync(record.path).size, at: 20 },
    ]);
    // The wait for the interval ended with the close: nothing is left for the simulation to run (a timer
    // still pending would move time to 1000 ms before the simulation found itself stalled).
    await expect(clock.run(new Promise(() => {}))).rejects.toThrow('simulation stalled at t=20 ms');
    expect(sync.calls).toHaveLength(2);
  });

  it('flush() syncs at once too, and the stream goes on at the interval afterwards', async () => {
    const clock = simClock();
    const sync = watchFdatasync(clock);
    const record = new RecordFile(join(tempDir(), 'r.jsonl'), { syncIntervalMs: INTERVAL, clock });
    await clock.run(
      (async () => {
        record.append(delivery('a'));
        const first = record.size;
        await clock.sleep(30);
        record.append(delivery('b'));
        await record.flush();
        expect(sync.calls.map((c) => [c.at, c.size])).toEqual([
          [0, first],
          [30, record.size],
        ]);
        await clock.sleep(200);
        expect(sync.calls).toHaveLength(2);
        await record.close();
      })(),
    );
  });
});
