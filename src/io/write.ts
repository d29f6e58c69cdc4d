import type { OutStream } from './streams.js';
import { jsonFor } from './terminal-json.js';

/** The error a write gets when the reader went away (`cardboard schema | head -1`). */
function brokenPipeError(): NodeJS.ErrnoException {
  return Object.assign(new Error('write EPIPE'), { code: 'EPIPE', errno: -32, syscall: 'write' });
}

/**
 * Write a chunk and wait for 'drain' when the stream's buffer is full, so a long listing streams in bounded
 * memory. A stream whose reader went away (destroyed after EPIPE) rejects with EPIPE instead of waiting for
 * a 'drain' that never comes.
 */
export async function writeChunk(stream: OutStream, chunk: string | Uint8Array): Promise<void> {
  if (stream.destroyed) throw brokenPipeError();
  if (stream.write(chunk)) return;
  await new Promise<void>((resolve, reject) => {
    const done = (err?: unknown) => {
      stream.off('drain', onDrain);
      stream.off('error', done);
      stream.off('close', onClose);
      if (err === undefined) resolve();
      else reject(err);
    };
    const onDrain = () => done();
    const onClose = () => done(brokenPipeError());
    stream.on('drain', onDrain);
    stream.on('error', done);
    stream.on('close', onClose);
  });
}

/**
 * Write one value as indented JSON and a newline (`--json` of single records); on a terminal its control
 * and bidi characters are `\uXXXX` escapes (jsonFor), on a pipe or in a file the text is exact.
 */
export function writeJson(stream: OutStream, value: unknown): Promise<void> {
  return writeChunk(stream, `${jsonFor(stream, JSON.stringify(value, null, 2))}\n`);
}

/** True for the error a write gets when the reader went away (`cardboard card list --all | head`). */
export function isBrokenPipe(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === 'EPIPE' || (err as NodeJS.ErrnoException | undefined)?.code === 'ERR_STREAM_DESTROYED';
}

/** Streams whose reader went away, and who wants to hear about it (main.ts, for the run in progress). */
const broken = new WeakSet<OutStream>();
const watchers = new WeakMap<OutStream, Set<() => void>>();

/**
 * The one place a closed pipe (`| head -1`, EPIPE) is handled. The first call for a stream adds an
 * 'error' listener that stays for the stream's life, so an EPIPE, whether the write failed at once or
 * later, is never an uncaught exception: the stream is marked broken and `onBroken` is told (once). Other
 * errors are thrown as before. Returns the function that stops telling `onBroken`.
 */
export function watchBrokenPipe(stream: OutStream, onBroken: () => void): () => void {
  let set = watchers.get(stream);
  if (!set) {
    const listeners = new Set<() => void>();
    set = listeners;
    watchers.set(stream, listeners);
    stream.on('error', (err: unknown) => {
      if (!isBrokenPipe(err)) throw err;
      if (broken.has(stream)) return;
      broken.add(stream);
      for (const listener of [...listeners]) listener();
    });
  }
  if (broken.has(stream)) queueMicrotask(onBroken);
  const listener = () => onBroken();
  set.add(listener);
  return () => set.delete(listener);
}

/** Whether the stream's reader went away (an EPIPE was seen on it). */
export function isPipeBroken(stream: OutStream): boolean {
  return broken.has(stream);
}
