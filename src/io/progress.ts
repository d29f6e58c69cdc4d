import { styleText } from 'node:util';
import { noticeText } from './notice.js';
import { type IoContext, type OutStream, useColor } from './streams.js';
import { plural } from './text.js';

/** A spinner on a terminal, or throttled plain lines elsewhere; every method writes to stderr only. */
interface Progress {
  start(text: string): void;
  /** New text; on the plain fallback printed at most once per interval. */
  update(text: string): void;
  succeed(text?: string): void;
  fail(text?: string): void;
  /** Clear the spinner without a final line. */
  stop(): void;
}

interface ProgressOptions {
  /** Print nothing at all (e.g. the caller writes JSON reports); --quiet implies it. */
  silent?: boolean;
  /** Minimum time between two plain update lines; default 5 s. */
  intervalMs?: number;
}

/**
 * True when an animated spinner may run: stderr is a TTY with a known width and CI is not set.
 * ora loops at 100% CPU on a terminal reporting 0 columns. ora also moves the cursor, so
 * the stream must be a real tty.WriteStream (cursorTo), not just claim isTTY.
 */
export function canAnimate(ctx: Pick<IoContext, 'stderr' | 'env'>): boolean {
  const err = ctx.stderr as OutStream & { cursorTo?: unknown };
  const isTerminal = Boolean(err.isTTY) && typeof err.cursorTo === 'function';
  return isTerminal && (err.columns ?? 0) > 0 && !ctx.env.CI && ctx.env.TERM !== 'dumb';
}

/** What progress reads of a run. */
type ProgressContext = Pick<IoContext, 'stderr' | 'env' | 'globals' | 'secrets' | 'clock'>;

const SILENT: Progress = { start() {}, update() {}, succeed() {}, fail() {}, stop() {} };

/** Build the progress reporter; ora is imported only when it will animate. */
export async function createProgress(ctx: ProgressContext, opts: ProgressOptions = {}): Promise<Progress> {
  if (opts.silent || ctx.globals.quiet) return SILENT;
  // One line of text, secrets redacted and control characters escaped (a file name, a field name).
  const safe = (text: string) => noticeText(ctx.secrets, text);
  const color = useColor(ctx, ctx.stderr);
  const okMark = color ? styleText('green', '✔', { validateStream: false }) : '✔';
  const failMark = color ? styleText('red', '✖', { validateStream: false }) : '✖';
  if (canAnimate(ctx)) {
    const { default: ora } = await import('ora');
    // discardStdin false: raw mode would swallow Ctrl-C, and callers handle SIGINT themselves.
    const spinner = ora({ stream: ctx.stderr, discardStdin: false, isEnabled: true, color: color ? 'cyan' : false });
    let current = '';
    return {
      start: (text) => {
        current = safe(text);
        spinner.start(current);
      },
      update: (text) => {
        current = safe(text);
        spinner.text = current;
      },
      succeed: (text) => spinner.stopAndPersist({ symbol: okMark, text: text === undefined ? current : safe(text) }),
      fail: (text) => spinner.stopAndPersist({ symbol: failMark, text: text === undefined ? current : safe(text) }),
      stop: () => spinner.stop(),
    };
  }
  return plainProgress(ctx, safe, opts.intervalMs ?? 5000, okMark, failMark);
}

/** Not a terminal: one line at start, an update line at most every `intervalMs` (by ctx.clock), and a final line. */
function plainProgress(ctx: ProgressContext, safe: (text: string) => string, intervalMs: number, okMark: string, failMark: string): Progress {
  let last = Number.NEGATIVE_INFINITY;
  let current = '';
  let pending = false;
  // The coloured mark is ours and goes on after the text was made safe.
  const line = (text: string, mark?: string) => ctx.stderr.write(`${mark === undefined ? '' : `${mark} `}${safe(text)}\n`);
  return {
    start: (text) => {
      current = text;
      last = ctx.clock.now();
      line(text);
    },
    update: (text) => {
      current = text;
      const now = ctx.clock.now();
      if (now - last >= intervalMs) {
        last = now;
        pending = false;
        line(text);
      } else {
        pending = true;
      }
    },
    succeed: (text) => line(text ?? current, okMark),
    fail: (text) => line(text ?? current, failMark),
    stop: () => {
      if (pending) line(current);
      pending = false;
    },
  };
}

/** The progress text of a board read: `Reading the board: 12 pages, 600 cards`. */
export function pagesText(read: { pages: number; cards: number }): string {
  return `Reading the board: ${plural(read.pages, 'page')}, ${plural(read.cards, 'card')}`;
}
