import { readFile } from 'node:fs/promises';
import { UsageError } from '../errors.js';
import type { IoContext } from './streams.js';

/** What reading stdin reads of a run. */
type InputContext = Pick<IoContext, 'stdin' | 'stderr' | 'globals'>;

/** On a terminal, say how to end the input, since a read of stdin waits for the user. */
export function announceStdin(ctx: InputContext): void {
  if (ctx.stdin.isTTY && !ctx.globals.quiet) ctx.stderr.write('Reading from stdin; end with Ctrl-D.\n');
}

/**
 * Read all of stdin as UTF-8. A read still pending when the run stops ends with CancelledError (main ends
 * stdin then), so Ctrl-C at a terminal waiting for input ends the run by SIGINT (130).
 */
export async function readStdin(ctx: InputContext): Promise<string> {
  return (await readStdinBytes(ctx)).toString('utf8');
}

/** Read all of stdin as bytes, as readStdin does (a request body sent as it is). */
export async function readStdinBytes(ctx: InputContext): Promise<Buffer> {
  announceStdin(ctx);
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks);
}

/** Read a file as UTF-8; a missing or unreadable file is a usage error naming the flag. */
export async function readTextFile(path: string, flag: string): Promise<string> {
  return (await readFileBytes(path, flag)).toString('utf8');
}

/** Read a file's bytes; a missing or unreadable file is a usage error naming the flag. */
export async function readFileBytes(path: string, flag: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new UsageError(`${flag}: cannot read ${path} (${reason})`, { cause: err });
  }
}

/** `-` reads stdin, `@path` reads a file, anything else is the text itself (curl/HTTPie convention). */
export function readTextArgument(ctx: InputContext, value: string, flag: string): Promise<string> {
  if (value === '-') return readStdin(ctx);
  if (value.startsWith('@')) return readTextFile(value.slice(1), flag);
  return Promise.resolve(value);
}
