// The record file's durability (RecordFile): a delivery's line is written before its 200, and
// fdatasync follows right after the 200s, once per burst, so an OS crash cannot take a line the service
// was told is safe. What reaches the disk cannot be seen from a test, so fs.fdatasync is watched: each
// call's file and the file's size at that moment, its completion held until the test lets it go.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { Listener } from '../../src/webhook/listener.js';
import { RecordFile } from '../../src/webhook/record-file.js';
import { tempDir } from '../helpers/cli.js';
import { post } from './helpers.js';

interface SyncCall {
  fd: number;
  /** The file's size when fdatasync was called: what it makes durable. */
  size: number;
}

/** Watch fs.fdatasync for this test (the ESM binding src/ imports follows the spy); `release` completes the held calls. */
function watchFdatasync(): { calls: SyncCall[]; release(): void } {
  const real = fs.fdatasync;
  const calls: SyncCall[] = [];
  const held: Array<() => void> = [];
  const spy = vi.spyOn(fs, 'fdatasync').mockImplementation((fd: number, callback: fs.NoParamCallback) => {
    calls.push({ fd, size: fs.fstatSync(fd).size });
    held.push(() => real(fd, callback));
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
    const record = new RecordFile(join(tempDir(), 'r.jsonl'));
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
    const record = new RecordFile(join(tempDir(), 'r.jsonl'));
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
