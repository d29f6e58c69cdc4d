import { once } from 'node:events';
import type { OutStream } from '../context.js';

/** Write a chunk and wait for 'drain' when the stream's buffer is full, so a long listing streams in bounded memory. */
export async function writeChunk(stream: OutStream, chunk: string): Promise<void> {
  if (!stream.write(chunk)) await once(stream, 'drain');
}

/** Write one value as indented JSON and a newline (`--json` of single records). */
export function writeJson(stream: OutStream, value: unknown): Promise<void> {
  return writeChunk(stream, `${JSON.stringify(value, null, 2)}\n`);
}

/** True for the error a write gets when the reader went away (`cardboard card list --all | head`). */
export function isBrokenPipe(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === 'EPIPE' || (err as NodeJS.ErrnoException | undefined)?.code === 'ERR_STREAM_DESTROYED';
}
