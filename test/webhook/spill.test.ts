import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Listener, type ListenerEvent } from '../../src/webhook/listener.js';
import { RecordFile } from '../../src/webhook/record-file.js';
import { tempDir } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';
import { post, TestApp } from './helpers.js';

let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

describe('forward queue', () => {
  it('spills past its memory bound and reads the rest back from the record file, in order, nothing lost', async () => {
    const target = new TestApp();
    await target.up();
    await target.down();
    cleanup.push(() => target.down());
    const events: ListenerEvent[] = [];
    const record = new RecordFile(join(tempDir(), 'spill.jsonl'));
    const listener = new Listener({
      host: '127.0.0.1',
      port: 0,
      path: '/',
      key: 'sk',
      maxBody: 1024,
      record,
      // Two in memory: the other 23 must come back from disk. A forward that timed out would be sent again
      // (a duplicate at the app): 30 s, which no answer from a live app on a loaded machine comes near.
      forward: { url: target.url, timeout: { ms: 30_000, text: '30s' }, retryCapMs: 20, memoryCount: 2 },
      onEvent: (e) => events.push(e),
    });
    const url = await listener.start();
    cleanup.push(() => listener.stop());
    for (let i = 1; i <= 25; i++) expect(await post(url, `{"n":${i}}`, 'sk')).toBe(200);
    expect(listener.forwarder!.pending).toBe(25);
    expect(listener.forwarder!.inMemory).toBe(2);
    await target.up();
    await target.waitForCompleted(25);
    expect(target.received.map((r) => r.body.toString())).toEqual(Array.from({ length: 25 }, (_, i) => `{"n":${i + 1}}`));
    const oks = () => events.flatMap((e) => (e.type === 'forward' && e.ok ? [e.seq] : []));
    await waitFor(() => oks().length >= 25, { what: "25 'forward' events with a 2xx" });
    expect(listener.forwarder!.pending).toBe(0);
    expect(oks()).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    // More deliveries after catching up go through memory again.
    expect(await post(url, '{"n":26}', 'sk')).toBe(200);
    await target.waitForCompleted(26);
    expect(target.received[25]!.body.toString()).toBe('{"n":26}');
  });
});
