// Long output on a terminal goes through a pager, as gh's does: $CARDBOARD_PAGER, else $PAGER, else
// `less -FRX` (LESS=FRX when LESS is unset). Never when stdout is not a terminal, with --no-pager, or when
// the pager is set to '' or `cat`; output that fits the screen is printed directly.
import type { ChildProcess } from 'node:child_process';
import { CancelledError } from '../errors.js';
import { createStatus } from './status.js';
import type { IoContext } from './streams.js';
import { writeChunk } from './write.js';

/** The pager when nothing is set: `-F` quits at once when the text fits, `-R` shows bold, `-X` leaves it on screen. */
export const DEFAULT_PAGER = 'less -FRX';

/**
 * The pager's command line for output of `lines` lines, or undefined to print directly. It is run by the
 * shell, as git and man run $PAGER (`less -R`, `sh -c '…'` and quoted paths all mean what they say); it comes
 * from the user's own environment, never from a server. Printed directly: only on a terminal whose
 * height is known, when the output does not fit it (the shell's prompt needs the last line), without
 * --no-pager, and when CARDBOARD_PAGER (else PAGER, else DEFAULT_PAGER) is neither empty nor `cat`.
 */
export function pagerCommand(ctx: Pick<IoContext, 'stdout' | 'env' | 'globals'>, lines: number): string | undefined {
  const { stdout, env } = ctx;
  if (!stdout.isTTY || ctx.globals.pager === false) return undefined;
  if (!stdout.rows || stdout.rows <= 0 || lines < stdout.rows) return undefined;
  const line = (env.CARDBOARD_PAGER ?? env.PAGER ?? DEFAULT_PAGER).trim();
  if (line === '' || line === 'cat') return undefined;
  return line;
}

/** Started, or why not (ENOENT: no such pager; EACCES: not executable). */
function started(child: ChildProcess): Promise<boolean> {
  return new Promise((resolve) => {
    child.once('spawn', () => resolve(true));
    child.once('error', () => resolve(false));
  });
}

/** What paging reads of a run: the streams, the environment, --no-pager, and the run's stop and drain (a warning on stderr too). */
export type PagerContext = Pick<IoContext, 'stdout' | 'stderr' | 'env' | 'globals' | 'secrets' | 'signal' | 'drain'>;

/** A shell's exit status for a command it could not find (127) or run (126): the pager showed nothing. */
const NOT_RUN = new Set([126, 127]);

/**
 * Write `text` to stdout, through the pager when pagerCommand says so. The pager writes to our stdout's
 * terminal itself; it is waited for, so the shell's prompt comes back after it. A pager that cannot be
 * started (or that its shell could not find) leaves the text printed directly. Ctrl-C reaches the pager
 * (the same process group) and is left to it, so the terminal is restored by the program that changed it;
 * a pager killed by it ends the run by SIGINT (130), SIGTERM is passed on to it. A pager quit before
 * it read everything (`q`) rejects with EPIPE, which ends the run quietly with exit 0 (main.ts).
 */
export async function writePaged(ctx: PagerContext, text: string): Promise<void> {
  const command = pagerCommand(ctx, text.split('\n').length - (text.endsWith('\n') ? 1 : 0));
  const fd = ctx.stdout.fd;
  if (command === undefined || typeof fd !== 'number') return writeChunk(ctx.stdout, text);
  const { spawn } = await import('node:child_process');
  // As gh: LESS=FRX (and LV=-c for lv) unless the user set them, so `PAGER=less` keeps colour and -F.
  const env = { ...ctx.env, LESS: ctx.env.LESS ?? 'FRX', LV: ctx.env.LV ?? '-c' };
  const stderr = typeof ctx.stderr.fd === 'number' ? ctx.stderr.fd : 'ignore';
  // `exec`: the shell parses the line, then becomes the pager, so Ctrl-C (sent to the whole process group)
  // reaches the pager alone; a shell left waiting would die of it and leave the pager behind on the terminal.
  const line = process.platform === 'win32' ? command : `exec ${command}`;
  const child = spawn(line, { shell: true, stdio: ['pipe', fd, stderr], env });
  if (!(await started(child))) return writeChunk(ctx.stdout, text);
  // Ctrl-C is the pager's (it reaches it directly); SIGTERM, or stdout's reader gone, ends it.
  const leave = ctx.drain.enable({ leaveInterrupts: true });
  const onStop = () => child.kill('SIGTERM');
  if (ctx.signal.aborted) onStop();
  else ctx.signal.addEventListener('abort', onStop, { once: true });
  const stopListening = () => {
    ctx.signal.removeEventListener('abort', onStop);
    leave();
  };
  try {
    const stdin = child.stdin!;
    // Both: the pager's end, and the end of our write to it. Whether the pager took everything is whether the
    // write finished: quit early, the write fails with EPIPE, or Node destroys the pipe when the pager exits.
    let finished = false;
    stdin.once('finish', () => (finished = true));
    const written = new Promise<void>((resolve) => {
      stdin.once('error', () => resolve());
      stdin.once('close', () => resolve());
    });
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    stdin.end(text);
    await Promise.all([exited, written]);
    const readerGone = !finished;
    // Killed by the signal, or (run by the shell) exited with the shell's status for it: 128 + 2 or 128 + 15.
    if (child.signalCode === 'SIGINT' || child.exitCode === 130) throw new CancelledError('Interrupted.', { signal: 'SIGINT' });
    if (child.signalCode === 'SIGTERM' || child.exitCode === 143) throw new CancelledError('Interrupted.', { signal: 'SIGTERM' });
    if (child.exitCode !== null && NOT_RUN.has(child.exitCode)) {
      createStatus(ctx).warn(`the pager \`${command}\` could not run (exit ${child.exitCode}); printing directly (set CARDBOARD_PAGER, or use --no-pager)`);
      return writeChunk(ctx.stdout, text);
    }
    if (readerGone) throw Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
  } finally {
    stopListening();
  }
}
