// Run the built CLI on a real pseudo-terminal (python3's pty module; Node has none) and collect what
// the terminal shows: runOnPty for commands that need no typing, startOnPty to watch and type.
import { execFileSync, spawn } from 'node:child_process';
import { BIN, CHILD_KILL_MS, childEnv, tempDir } from './cli.js';
import { within } from './wait.js';

let interpreter: string | undefined;

/**
 * The python3 that `python3` on PATH runs, found once: a version manager's shim (pyenv's is a bash script
 * that runs several more) costs ~0.5 s of CPU per start, and every pty run starts python.
 */
export function python(): string {
  if (interpreter === undefined) {
    try {
      interpreter = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim() || 'python3';
    } catch {
      interpreter = 'python3';
    }
  }
  return interpreter;
}

/**
 * The relay between a test and a pseudo-terminal: the command runs with the pty as its stdin, stdout and
 * stderr; what it shows comes out on the relay's stdout, what the test writes to the relay's stdin is typed
 * into it (stdin closed or /dev/null: nothing is typed). Its exit status is the command's; killing the relay
 * closes the pty and the command gets SIGHUP. PTY_ARGS (JSON argv), PTY_ROWS and PTY_COLS in its environment.
 * A command killed by a signal kills the relay with it, so the test sees the death as the shell would.
 */
export const PTY_RELAY = `
import fcntl, json, os, pty, select, signal, struct, sys, termios
args = json.loads(os.environ['PTY_ARGS'])
size = struct.pack('HHHH', int(os.environ['PTY_ROWS']), int(os.environ['PTY_COLS']), 0, 0)
pid, fd = pty.fork()
if pid == 0:
    # The size is set on the terminal before the command starts: set from the parent after the fork, a
    # command that starts first (a busy machine) reads the default size.
    fcntl.ioctl(0, termios.TIOCSWINSZ, size)
    os.execvp(args[0], args)
fcntl.ioctl(fd, termios.TIOCSWINSZ, size)
inputs = [fd, 0]
while True:
    ready, _, _ = select.select(inputs, [], [])
    if 0 in ready:
        typed = os.read(0, 4096)
        if typed:
            os.write(fd, typed)
        else:
            inputs.remove(0)
    if fd in ready:
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b''
        if not data:
            break
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
_, status = os.waitpid(pid, 0)
if os.WIFSIGNALED(status):
    signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
    os.kill(os.getpid(), os.WTERMSIG(status))
sys.exit(os.waitstatus_to_exitcode(status))
`;

/** How a command on a pty ended: its exit code, or the signal that killed it (code null then). */
export interface PtyEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * `cardboard args…` on a `cols`×`rows` pty (default 100×40) with `env` over the test environment (TERM=xterm);
 * the screen bytes decoded once at the end (a chunk may end inside '│'), and the exit code. Killed after CHILD_KILL_MS.
 * No pager (CARDBOARD_PAGER empty) unless `env` names CARDBOARD_PAGER: `less` would wait for a key no one types.
 */
export function runOnPty(
  args: string[],
  env: Record<string, string | undefined>,
  size: { cols?: number; rows?: number } = {},
): Promise<{ code: number | null; signal: NodeJS.Signals | null; screen: string }> {
  const configDir = env.CARDBOARD_CONFIG_DIR ?? tempDir();
  const childenv = childEnv({ configDir, env: { TERM: 'xterm', CARDBOARD_PAGER: '', ...env, CARDBOARD_CONFIG_DIR: configDir } });
  childenv.PTY_ARGS = JSON.stringify([process.execPath, BIN, ...args]);
  childenv.PTY_ROWS = String(size.rows ?? 40);
  childenv.PTY_COLS = String(size.cols ?? 100);
  return new Promise((resolve, reject) => {
    const child = spawn(python(), ['-c', PTY_RELAY], { env: childenv, stdio: ['ignore', 'pipe', 'inherit'] });
    const out: Buffer[] = [];
    const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_KILL_MS);
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, screen: Buffer.concat(out).toString('utf8') });
    });
  });
}

/** A command running on a pty that the test reads while it runs and types into. */
export interface PtySession {
  /** Everything the terminal was sent so far, escape codes included (decoded as it came, per character). */
  raw(): string;
  /** Resolve once the raw output matches `re`; rejects if the command exits first. */
  waitFor(re: RegExp): Promise<RegExpExecArray>;
  /** Type keystrokes into the terminal. */
  type(keys: string): void;
  /** The command's exit code (killed with SIGKILL after CHILD_KILL_MS); null when a signal killed it. */
  exit: Promise<number | null>;
  /** The command's exit code, or the signal that killed it. */
  ended: Promise<PtyEnd>;
}

/** `cardboard args…` on a `cols`×`rows` pty, like runOnPty, but running while the test watches and types. */
export function startOnPty(args: string[], env: Record<string, string | undefined>, size: { cols?: number; rows?: number } = {}): PtySession {
  return startCommandOnPty([process.execPath, BIN, ...args], env, size);
}

/** Any command (`argv`: a shell running cardboard in a loop) on a pty, with the environment startOnPty gives cardboard. */
export function startCommandOnPty(argv: string[], env: Record<string, string | undefined>, size: { cols?: number; rows?: number } = {}): PtySession {
  const configDir = env.CARDBOARD_CONFIG_DIR ?? tempDir();
  const childenv = childEnv({ configDir, env: { TERM: 'xterm', ...env, CARDBOARD_CONFIG_DIR: configDir } });
  childenv.PTY_ARGS = JSON.stringify(argv);
  childenv.PTY_ROWS = String(size.rows ?? 40);
  childenv.PTY_COLS = String(size.cols ?? 100);
  const child = spawn(python(), ['-c', PTY_RELAY], { env: childenv, stdio: ['pipe', 'pipe', 'inherit'] });
  let screen = '';
  let exited = false;
  const waiters = new Set<() => void>();
  const poke = () => {
    for (const w of [...waiters]) w();
  };
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (s: string) => {
    screen += s;
    poke();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_KILL_MS);
  const ended = new Promise<PtyEnd>((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      exited = true;
      poke();
      resolve({ code, signal });
    });
  });
  return {
    raw: () => screen,
    type: (keys) => child.stdin.write(keys),
    exit: ended.then((e) => e.code),
    ended,
    waitFor: (re) =>
      within(
        new Promise<RegExpExecArray>((resolve, reject) => {
          const check = () => {
            const m = re.exec(screen);
            if (!m && !exited) return;
            waiters.delete(check);
            if (m) resolve(m);
            else reject(new Error(`exited before showing ${String(re)}; the terminal showed:\n${screen}`));
          };
          waiters.add(check);
          check();
        }),
        { what: () => `the terminal to show ${String(re)}; it showed:\n${screen}` },
      ),
  };
}
