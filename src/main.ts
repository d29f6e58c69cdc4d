import type { Command } from 'commander';
import type { Context, ContextParts } from './context.js';
import { CancelledError, CardboardError, ExitCode, UsageError } from './errors.js';
import { type Host, hostOf } from './host.js';
import { Cancellation, isStopSignal, signalExitCode, type StopSignal } from './interrupt.js';
import { isBrokenPipe, watchBrokenPipe } from './io/write.js';
import { buildProgram, CommanderError, scanArgv, trackCommand, usageAdvice } from './program.js';
import type { Secrets } from './redact.js';

/** How a run ended: its exit code, and the signal that stopped it, which the process must end by. */
interface RunEnd {
  code: number;
  /** SIGINT or SIGTERM stopped the run (`code` is then 130 or 143): bin/cardboard.js ends by it. */
  signal?: StopSignal;
}

/** Run the CLI with argv (without node and script); returns the exit code and never exits the process. */
export async function main(argv: string[], parts: ContextParts = {}): Promise<number> {
  return (await runToEnd(argv, parts)).code;
}

/**
 * Run the CLI as main does, and say how it ended: a run stopped by a signal (Ctrl-C, SIGTERM, or Ctrl-C
 * typed at a prompt or a pager) has cleaned up when this returns, and then ends by that signal
 * (interrupt.ts exitBySignal), whatever the command made of it; a broken pipe is no signal (exit 0).
 * The run's context is built here, once, when commander has parsed the command line (its preAction), and
 * never changed after; `parts` replaces the process's streams, env, clock or signals (tests). What only a
 * command or an error needs (the context, the reporter's text escaping) is loaded then, not at start-up,
 * so `--help` loads little more than commander.
 */
export async function runToEnd(argv: string[], parts: ContextParts = {}): Promise<RunEnd> {
  const host = hostOf(parts);
  // The run's one signal tree: Ctrl-C and SIGTERM from here on stop every wait (interrupt.ts).
  const cancel = parts.cancel ?? new Cancellation(host.signals, host.clock);
  // The run's registry of secrets, made with the context (redaction is not loaded for `--help`): the context
  // reads it, whoever learns a secret (the API session, a command that reads a key) is handed it.
  let secrets = parts.secrets;
  let ctx: Context | undefined;
  const runContext = (): Context => {
    if (!ctx) throw new Error('the run context is built when commander runs an action');
    return ctx;
  };
  const runSecrets = (): Secrets => {
    if (!secrets) throw new Error("the run's secrets are made with its context");
    return secrets;
  };
  // A reader that went away (`| head -1`) stops the run with its own reason and exit 0: requests in flight
  // end, a long run such as `webhook listen` winds down, and nothing is reported. On stderr it only means
  // there is no one to tell (src/io/write.ts).
  const stopWatching = [watchBrokenPipe(host.stdout, () => cancel.stop('broken-pipe')), watchBrokenPipe(host.stderr, () => {})];
  // Input is work: a read of stdin pending when the run stops or drains (a terminal waiting for Ctrl-D,
  // a pipe that never ends) ends with CancelledError, since a pending read does not end by itself once a SIGINT listener is installed.
  const endInput = () => {
    if (host.stdin.destroyed) return;
    host.stdin.once('error', () => {}); // the reader, if any, gets the error; nobody reading is no crash
    host.stdin.destroy(new CancelledError('Interrupted.', { cause: cancel.drain.reason }));
  };
  cancel.drain.addEventListener('abort', endInput, { once: true });
  let program: Command | undefined;
  let failing: (() => Command) | undefined;
  let code: number;
  /** A signal the run ends by that it never received itself (CancelledError.signal). */
  let unseen: StopSignal | undefined;
  try {
    program = await buildProgram(host, argv, runContext, false, runSecrets);
    failing = trackCommand(program, argv);
    program.hook('preAction', async (_root, action) => {
      const [{ createContext }, { Secrets }] = await Promise.all([import('./context.js'), import('./redact.js')]);
      secrets ??= new Secrets();
      ctx = createContext({ ...parts, secrets, cancel, globals: action.optsWithGlobals() });
    });
    await program.parseAsync(argv, { from: 'user' });
    code = ExitCode.ok;
  } catch (err) {
    // A reader gone is nothing to report; a run the user stopped still ends by the signal below (a `| jq` dies of the same Ctrl-C).
    if (cancel.reason === 'broken-pipe' || isBrokenPipe(err)) code = ExitCode.ok;
    else {
      // Read from argv by the tree's options (`-qv` too): the error may come before commander read them.
      code = await report(err, host, secrets, scanArgv(argv, program).given.has('--verbose'), failing?.());
      if (err instanceof CancelledError) unseen = err.signal;
    }
  } finally {
    for (const stop of stopWatching) stop();
    cancel.drain.removeEventListener('abort', endInput);
    cancel.dispose();
    await ctx?.close();
  }
  // Stopped by a signal, the run ends by it, whether the command ended with an error or, as a listener
  // does, by winding down: a loop running cardboard stops when the user asked it to.
  const signal = isStopSignal(cancel.reason) ? cancel.reason : unseen;
  return signal === undefined ? { code } : { code: signalExitCode(signal), signal };
}

/**
 * Print `err` on stderr and return its exit code. A usage error (commander's, or a UsageError) reads as in
 * gh: `error: …`, `Did you mean X?` when a word is close, the hint, then the usage line of `command`, the
 * command that failed, and `See 'cardboard … --help'.`
 */
async function report(err: unknown, host: Pick<Host, 'stderr'>, secrets: Secrets | undefined, verbose: boolean, command?: Command): Promise<number> {
  // Commander has printed the help or the version (exit code 0), or the help of a group run without a verb.
  if (err instanceof CommanderError && (err.exitCode === 0 || err.code === 'commander.help')) return err.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
  const [{ notice }, { Secrets }] = await Promise.all([import('./io/notice.js'), import('./redact.js')]);
  // Before a context was built no secret is known: an error of parsing holds none.
  const known = secrets ?? new Secrets();
  // Messages quote the server (field names, suggestions, its error text), the user's files and arguments:
  // escaped, so nothing in them moves the cursor or retitles the terminal; said under --quiet too. Line breaks
  // stay: a message or hint may list one item a line (each quoted value is escaped to one line where it is built).
  const write = (line: string) => notice({ stderr: host.stderr, secrets: known }, line, { always: true, keepNewlines: true });
  if (err instanceof CommanderError || err instanceof UsageError) {
    // Commander's message (unknown option or command, missing or excess argument, bad choice), which
    // program.ts leaves to this reporter, already reads `error: …`.
    write(err instanceof UsageError ? `error: ${err.message}` : err.message);
    const advice = command ? await usageAdvice(err, command) : { usage: [] };
    if (advice.suggestion !== undefined) write(`Did you mean ${advice.suggestion}?`);
    if (err instanceof UsageError && err.hint) write(`hint: ${err.hint}`);
    if (verbose && err instanceof UsageError && err.cause instanceof Error) write(`cause: ${err.cause.stack ?? err.cause.message}`);
    for (const line of advice.usage) write(line);
    return ExitCode.usage;
  }
  if (err instanceof CardboardError) {
    write(`${err.label}: ${err.message}`);
    if (err.hint) write(`hint: ${err.hint}`);
    if (verbose && err.cause instanceof Error) write(`cause: ${err.cause.stack ?? err.cause.message}`);
    return err.exitCode;
  }
  const e = err instanceof Error ? err : new Error(String(err));
  write(`error: ${e.message}`);
  write(verbose ? (e.stack ?? '') : 'This is a bug in cardboard; run with --verbose for details.');
  return ExitCode.failure;
}
