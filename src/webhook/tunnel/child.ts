import { type ChildProcess, spawn } from 'node:child_process';
import { constants } from 'node:os';
import { createInterface } from 'node:readline';

/** How a tool ended. */
export interface ToolExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running tunnel tool. */
interface ToolChild {
  /** The process group's id (the watcher's pid), for tests and --verbose. */
  readonly pid: number | undefined;
  /** Resolves when the tool has ended, however it ended; never rejects. */
  readonly exited: Promise<ToolExit>;
  /** End the tool and resolve once it is gone. Idempotent. */
  stop(): Promise<ToolExit>;
}

/** Starts a tool; a test passes its own (simulated) one to the tunnel engine. */
export type StartTool = (file: string, args: readonly string[], onLine: (line: string, stream: 'stdout' | 'stderr') => void) => ToolChild;

/**
 * The one mechanism that ends the tool with cardboard, whichever way cardboard ends: a spawned
 * child outlives a parent killed by SIGKILL, and `process.on('exit')` does not run then. The tool runs
 * under this watcher, whose stdin is a pipe from cardboard that is never written: end of file on it means
 * cardboard closed it (stop()) or cardboard is gone (exit, crash, kill -9). Either way the watcher sends the
 * tool SIGTERM, and SIGKILL 3 s later if it is still there. A shell, not a second Node process: it costs
 * about a megabyte and no start-up time, and no library watches a parent's end this way.
 *
 * `$0` names the watcher; `"$@"` is the tool and its arguments, passed as separate words (no quoting).
 * The watcher ignores INT, TERM and HUP so that only its pipe ends it; the tool keeps its default handlers.
 * The shell's own messages ("Killed" for a job it reaps) go to /dev/null: stderr is the tool's alone (fd 4).
 */
const WATCHER = `
exec 3<&0 </dev/null 4>&2 2>/dev/null
"$@" 3<&- 2>&4 4>&- &
tool=$!
(
  trap '' INT TERM HUP
  while read -r _ <&3; do :; done
  kill -TERM "$tool" 2>/dev/null
  n=0
  while kill -0 "$tool" 2>/dev/null; do
    n=$((n + 1))
    if [ "$n" -gt 30 ]; then kill -KILL "$tool" 2>/dev/null; break; fi
    sleep 0.1
  done
) &
watcher=$!
exec 3<&-
wait "$tool"
code=$?
kill -KILL "$watcher" 2>/dev/null
exit "$code"
`;

/** If the watcher has not ended this long after its pipe closed, its whole process group is killed. */
const STOP_LIMIT_MS = 10_000;

/**
 * Start `file args…` under the watcher, in a process group of its own (`detached`): Ctrl-C at the terminal
 * reaches cardboard only, which decides when the tool stops. Each line of its stdout and stderr goes to
 * `onLine`, decoded as UTF-8 (a bad byte becomes U+FFFD; the caller escapes before printing).
 */
export function startTool(file: string, args: readonly string[], onLine: (line: string, stream: 'stdout' | 'stderr') => void, env: NodeJS.ProcessEnv = process.env): ToolChild {
  const child: ChildProcess = spawn('/bin/sh', ['-c', WATCHER, 'cardboard-tunnel-watcher', file, ...args], { detached: true, stdio: ['pipe', 'pipe', 'pipe'], env });
  // The pipe is the watcher's lifeline: an error on it (EPIPE once the watcher is gone) means nothing more.
  child.stdin!.on('error', () => {});
  for (const stream of ['stdout', 'stderr'] as const) {
    const lines = createInterface({ input: child[stream]!.setEncoding('utf8'), crlfDelay: Infinity });
    lines.on('line', (line) => onLine(line, stream));
  }
  const exited = new Promise<ToolExit>((resolve) => {
    child.once('error', () => resolve({ code: 127, signal: null }));
    child.once('exit', (code, signal) => {
      child.stdin!.destroy();
      resolve(signal === null && code !== null ? toolExit(code) : { code, signal });
    });
  });
  let stopping: Promise<ToolExit> | undefined;
  const stop = (): Promise<ToolExit> => {
    stopping ??= (async () => {
      child.stdin!.destroy();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_LIMIT_MS)));
      const done = await Promise.race([exited, late]);
      clearTimeout(timer);
      // The watcher ended (or hangs): anything left in its group (a tool's own children) goes now.
      killGroup(child.pid);
      return done ?? (await exited);
    })();
    return stopping;
  };
  return { pid: child.pid, exited, stop };
}

/** The watcher exits with the tool's status: 128 + n when a signal n ended the tool (as a shell reports it). */
function toolExit(code: number): ToolExit {
  const signal = code > 128 ? Object.entries(constants.signals).find(([, n]) => n === code - 128)?.[0] : undefined;
  return signal ? { code: null, signal: signal as NodeJS.Signals } : { code, signal: null };
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: the group is empty already.
  }
}
