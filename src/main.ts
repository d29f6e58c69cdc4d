import { CommanderError } from 'commander';
import { type Context, createContext, redact } from './context.js';
import { CardboardError, ExitCode } from './errors.js';
import { terminalText } from './io/text.js';
import type { StopSignal } from './interrupt.js';
import { isBrokenPipe, watchBrokenPipe } from './io/write.js';
import { buildProgram } from './program.js';

/** Run the CLI with argv (without node and script); returns the exit code and never exits the process. */
export async function main(argv: string[], ctx: Context = createContext()): Promise<number> {
  const controller = new AbortController();
  ctx.signal = controller.signal;
  // SIGTERM aborts requests in flight (exit 130). So does Ctrl-C, except while a long run handles it
  // itself through interruptible() (finish what is in flight, then a summary): before that run starts (an
  // import reading its file, the schema or the board) a Ctrl-C must not be swallowed.
  const source = ctx.signals;
  let claimed = 0;
  const runs = new Set<(signal: StopSignal) => void>();
  ctx.signals = {
    listen(listener) {
      claimed++;
      runs.add(listener);
      const stop = source.listen(listener);
      return () => {
        claimed--;
        runs.delete(listener);
        stop();
      };
    },
    exitNow: (code) => source.exitNow(code),
  };
  const stopListening = source.listen((s) => {
    if (s === 'SIGTERM' || claimed === 0) controller.abort();
  });
  // A reader that went away (`| head -1`) ends the run quietly with exit 0: it stops as on SIGTERM (requests
  // in flight end, a long run such as `webhook listen` winds down) and nothing is reported. On stderr it
  // only means there is no one to tell (src/io/write.ts).
  let readerGone = false;
  const stopWatching = [
    watchBrokenPipe(ctx.stdout, () => {
      readerGone = true;
      controller.abort();
      for (const run of [...runs]) run('SIGTERM');
    }),
    watchBrokenPipe(ctx.stderr, () => {}),
  ];
  try {
    const program = await buildProgram(ctx, argv);
    await program.parseAsync(argv, { from: 'user' });
    return ExitCode.ok;
  } catch (err) {
    if (readerGone || isBrokenPipe(err)) return ExitCode.ok;
    return report(err, ctx, argv.includes('--verbose') || argv.includes('-v'));
  } finally {
    for (const stop of stopWatching) stop();
    stopListening();
    ctx.signals = source;
    await ctx.close();
  }
}

function report(err: unknown, ctx: Context, verbose: boolean): number {
  if (err instanceof CommanderError) {
    // Commander has already printed the message (or the help/version).
    if (err.exitCode === 0) return ExitCode.ok;
    return ExitCode.usage;
  }
  // Messages quote the server (field names, suggestions, its error text) and the user's files: escaped,
  // so nothing in them moves the cursor or retitles the terminal. Line breaks stay: a message or hint
  // may list one item a line (each quoted value is escaped to one line where it is built).
  const write = (line: string) => ctx.stderr.write(`${terminalText(redact(ctx, line), { keepNewlines: true })}\n`);
  if (err instanceof CardboardError) {
    write(`error: ${err.message}`);
    if (err.hint) write(`hint: ${err.hint}`);
    if (verbose && err.cause instanceof Error) write(`cause: ${err.cause.stack ?? err.cause.message}`);
    return err.exitCode;
  }
  const e = err instanceof Error ? err : new Error(String(err));
  write(`error: ${e.message}`);
  write(verbose ? (e.stack ?? '') : 'This is a bug in cardboard; run with --verbose for details.');
  return ExitCode.failure;
}
