import { readFile } from 'node:fs/promises';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';

/** On a terminal, say how to end the input, since a read of stdin waits for the user. */
export function announceStdin(ctx: Context): void {
  if (ctx.stdin.isTTY && !ctx.globals.quiet) ctx.stderr.write('Reading from stdin; end with Ctrl-D.\n');
}

/**
 * Read all of stdin as UTF-8. A read still pending when the run stops ends with CancelledError (main ends
 * stdin then), so Ctrl-C at a terminal waiting for input ends the run by SIGINT (130).
 */
export async function readStdin(ctx: Context): Promise<string> {
  announceStdin(ctx);
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** Read a file as UTF-8; a missing or unreadable file is a usage error naming the flag. */
export async function readTextFile(path: string, flag: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new UsageError(`${flag}: cannot read ${path} (${reason})`, { cause: err });
  }
}

/** `-` reads stdin, `@path` reads a file, anything else is the text itself (curl/HTTPie convention). */
export function readTextArgument(ctx: Context, value: string, flag: string): Promise<string> {
  if (value === '-') return readStdin(ctx);
  if (value.startsWith('@')) return readTextFile(value.slice(1), flag);
  return Promise.resolve(value);
}
