// The line a person reads on stderr, made one way for every message cardboard writes there itself (errors,
// warnings, notes, progress, the --verbose log): the run's secrets redacted first, so that no escape can
// split one and hide it from the search; then escaped for the terminal (terminalText), so nothing quoted from
// a server or a file moves the cursor; then left out under --quiet unless it must be said.
import type { Redactor } from '../redact.js';
import type { IoContext } from './streams.js';
import { terminalText } from './text.js';

interface NoticeOptions {
  /** Said under --quiet too: an error, a warning, a line the user asked for (--verbose, a URL to paste). */
  always?: boolean;
  /** Keep line breaks (an error that lists one item a line); otherwise the text is one line, `\n` shown as such. */
  keepNewlines?: boolean;
  /** Written before the text as it is: cardboard's own label, perhaps coloured (`warning: `), never escaped. */
  prefix?: string;
}

/** Where a notice goes and what it reads: stderr, the secrets, and --quiet (none: nothing is silenced). */
export interface NoticeContext {
  readonly stderr: { write(text: string): unknown };
  readonly secrets: Pick<Redactor, 'redact'>;
  readonly globals?: Readonly<Pick<IoContext['globals'], 'quiet'>>;
}

/** The text of a notice, without its line break: redacted, then escaped, after `prefix` (see the top of this file). */
export function noticeText(secrets: Pick<Redactor, 'redact'>, text: string, opts: Omit<NoticeOptions, 'always'> = {}): string {
  return `${opts.prefix ?? ''}${terminalText(secrets.redact(text), { keepNewlines: opts.keepNewlines })}`;
}

/** Write `text` as a line on stderr (noticeText); nothing under --quiet unless `always`. */
export function notice(ctx: NoticeContext, text: string, opts: NoticeOptions = {}): void {
  if (ctx.globals?.quiet && !opts.always) return;
  ctx.stderr.write(`${noticeText(ctx.secrets, text, opts)}\n`);
}
