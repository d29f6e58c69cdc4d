import type { Context } from '../../context.js';
import { isInteractive } from '../../context.js';
import { UsageError } from '../../errors.js';
import { readStdin } from '../../io/input.js';
import { answer } from '../../io/prompt.js';

/** Drop one trailing newline (CRLF too), as `echo` and `pbpaste` add one; keep everything else. */
function trimOneNewline(text: string): string {
  return text.replace(/\r?\n$/, '');
}

/**
 * Read the secrets piped on stdin: one value, or with `two` the token on the first line and the
 * signing key on the second (`--token-stdin --signing-key-stdin`).
 */
export async function readSecretsFromStdin(ctx: Context, two: boolean): Promise<string[]> {
  const text = trimOneNewline(await readStdin(ctx));
  if (!two) return [text];
  const m = /^([^\r\n]*)\r?\n([^\r\n]*)$/.exec(text);
  if (!m) throw new UsageError('With --token-stdin and --signing-key-stdin, stdin must hold two lines: the token, then the signing key.');
  return [m[1]!, m[2]!];
}

/** Ask for a secret without echoing it (prompt on stderr); only on a TTY with CI unset, since elsewhere a prompt waits for ever. */
export async function promptSecret(ctx: Context, message: string, flag: string): Promise<string> {
  if (!isInteractive(ctx)) {
    // Never a flag value: it would show in `ps` and the shell history.
    throw new UsageError(`No terminal to ask for the ${message.toLowerCase()}.`, { hint: `Pipe it on stdin with ${flag}.` });
  }
  const { password } = await import('@inquirer/prompts');
  return answer(password({ message: `${message} (input hidden):` }, { input: ctx.stdin, output: ctx.stderr, signal: ctx.signal }));
}

/** Reject an empty or multi-line secret before it is stored or sent. */
export function checkSecret(value: string, what: string): string {
  if (value.trim() === '') throw new UsageError(`The ${what} is empty.`);
  if (/[\r\n]/.test(value)) throw new UsageError(`The ${what} holds a line break.`, { hint: 'Pipe exactly one line.' });
  return value;
}
