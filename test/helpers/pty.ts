// Run the built CLI on a real pseudo-terminal (python3's pty module; Node has none) and collect what
// the terminal shows. For commands that need no typing; test/import/tty.e2e.test.ts relays keystrokes too.
import { spawn } from 'node:child_process';
import { BIN, childEnv, tempDir } from './cli.js';

const PTY_RELAY = `
import fcntl, json, os, pty, struct, sys, termios
args = json.loads(os.environ['PTY_ARGS'])
pid, fd = pty.fork()
if pid == 0:
    os.execvp(args[0], args)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', int(os.environ['PTY_ROWS']), int(os.environ['PTY_COLS']), 0, 0))
while True:
    try:
        data = os.read(fd, 65536)
    except OSError:
        data = b''
    if not data:
        break
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
`;

/**
 * `cardboard args…` on a `cols`×`rows` pty (default 100×40) with `env` over the test environment (TERM=xterm);
 * the screen bytes decoded once at the end (a chunk may end inside '│'), and the exit code. Killed after 20 s.
 * No pager (CARDBOARD_PAGER empty) unless `env` names CARDBOARD_PAGER: `less` would wait for a key no one types.
 */
export function runOnPty(
  args: string[],
  env: Record<string, string | undefined>,
  size: { cols?: number; rows?: number } = {},
): Promise<{ code: number | null; screen: string }> {
  const configDir = env.CARDBOARD_CONFIG_DIR ?? tempDir();
  const childenv = childEnv({ configDir, env: { TERM: 'xterm', CARDBOARD_PAGER: '', ...env, CARDBOARD_CONFIG_DIR: configDir } });
  childenv.PTY_ARGS = JSON.stringify([process.execPath, BIN, ...args]);
  childenv.PTY_ROWS = String(size.rows ?? 40);
  childenv.PTY_COLS = String(size.cols ?? 100);
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-c', PTY_RELAY], { env: childenv, stdio: ['ignore', 'pipe', 'inherit'] });
    const out: Buffer[] = [];
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, screen: Buffer.concat(out).toString('utf8') });
    });
  });
}
