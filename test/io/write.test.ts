// The one place a closed pipe is handled: writes to a stream whose reader went away reject
// with EPIPE instead of waiting for a 'drain' that never comes, and an EPIPE is never an uncaught error.
import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { isBrokenPipe, isPipeBroken, watchBrokenPipe, writeChunk } from '../../src/io/write.js';

const epipe = () => Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });

/** A stream that accepts nothing until told: every write waits for 'drain'. */
function stuck(): Writable {
  return new Writable({ highWaterMark: 1, write: () => {} });
}

describe('writeChunk', () => {
  it('rejects with EPIPE on a stream already destroyed', async () => {
    const s = stuck();
    watchBrokenPipe(s, () => {});
    s.destroy(epipe());
    await expect(writeChunk(s, 'x')).rejects.toSatisfy(isBrokenPipe);
  });

  it('stops waiting for drain when the reader goes away meanwhile', async () => {
    const s = stuck();
    watchBrokenPipe(s, () => {});
    const pending = writeChunk(s, 'more than one byte');
    s.destroy(epipe());
    await expect(pending).rejects.toSatisfy(isBrokenPipe);
  });
});

describe('watchBrokenPipe', () => {
  it('tells every watcher once, marks the stream, and keeps swallowing EPIPE after they stop', async () => {
    const s = stuck();
    const first = vi.fn();
    const stop = watchBrokenPipe(s, first);
    s.emit('error', epipe());
    s.emit('error', epipe());
    expect(first).toHaveBeenCalledTimes(1);
    expect(isPipeBroken(s)).toBe(true);
    stop();
    expect(() => s.emit('error', epipe())).not.toThrow();
    const late = vi.fn();
    watchBrokenPipe(s, late);
    await Promise.resolve();
    expect(late).toHaveBeenCalledTimes(1);
  });

  it('lets any other stream error through', () => {
    const s = stuck();
    watchBrokenPipe(s, () => {});
    expect(() => s.emit('error', Object.assign(new Error('disk full'), { code: 'ENOSPC' }))).toThrow('disk full');
  });
});
