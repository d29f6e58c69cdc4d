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

/**
 * What a watched stream carries about its reader: whether it went away (an EPIPE was seen) and who wants to
 * hear about it (main.ts, for the run in progress). Held by the stream itself, under a key of this module's
 * own, so it lives as long as the stream and nowhere else: process.stdout is shared by every run of a process.
 */
const PIPE = Symbol('cardboard.pipe');
interface PipeWatch {
  broken: boolean;
  readonly listeners: Set<() => void>;
}
type Watched = OutStream & { [PIPE]?: PipeWatch };

/**
 * The one place a closed pipe (`| head -1`, EPIPE) is handled. The first call for a stream adds an
 * 'error' listener that stays for the stream's life, so an EPIPE, whether the write failed at once or
 * later, is never an uncaught exception: the stream is marked broken and `onBroken` is told (once). Other
 * errors are thrown as before. Returns the function that stops telling `onBroken`.
 */
export function watchBrokenPipe(stream: OutStream, onBroken: () => void): () => void {
  const watched = stream as Watched;
  let watch = watched[PIPE];
  if (!watch) {
    const state: PipeWatch = { broken: false, listeners: new Set() };
    watch = state;
    Object.defineProperty(watched, PIPE, { value: state });
    stream.on('error', (err: unknown) => {
      if (!isBrokenPipe(err)) throw err;
      if (state.broken) return;
      state.broken = true;
      for (const listener of [...state.listeners]) listener();
    });
  }
  if (watch.broken) queueMicrotask(onBroken);
  const listener = () => onBroken();
  const { listeners } = watch;
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Whether the stream's reader went away (an EPIPE was seen on it). */
export function isPipeBroken(stream: OutStream): boolean {
  return (stream as Watched)[PIPE]?.broken === true;
}
