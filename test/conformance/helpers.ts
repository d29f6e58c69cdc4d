import { spawn } from 'node:child_process';
import { expect, onTestFinished } from 'vitest';
import { BIN, type CliResult, childEnv, type RunOptions, runMain, tempDir } from '../helpers/cli.js';
import { python } from '../helpers/pty.js';
import { type AltField, type AltOptions, type AltServer, startAltServer } from './alt-server.js';

/** Start the alt server for this test; it is closed when the test finishes. */
export async function start(opts: Partial<AltOptions> = {}, fields?: AltField[]): Promise<AltServer> {
  const server = await startAltServer(opts, fields);
  // A test may have closed it already (a server that went away).
  onTestFinished(() => server.close().catch(() => {}));
  return server;
}

/** Run the built CLI in CI mode (env only) against the alt server; fails the test if the token leaks or a spec rule was broken. */
export async function run(server: AltServer, args: string[], opts: RunOptions & { token?: string } = {}): Promise<CliResult> {
  const r = await runMain(args, {
    ...opts,
    configDir: opts.configDir ?? tempDir(),
    env: {
      CARDBOARD_BASE_URL: server.url,
      CARDBOARD_BOARD: server.opts.boardId,
      CARDBOARD_TOKEN: opts.token ?? server.opts.token,
      ...opts.env,
    },
  });
  noLeak(server, r);
  expect(server.violations).toEqual([]);
  return r;
}

/** The token (and any wrong token used) never appears in stdout or stderr. */
export function noLeak(server: AltServer, r: { stdout: string; stderr: string }, extra: string[] = []): void {
  for (const secret of [server.opts.token, ...extra]) {
    expect(r.stdout).not.toContain(secret);
    expect(r.stderr).not.toContain(secret);
  }
}

/** Requests that reached the server with this method. */
export function seen(server: AltServer, method: string): AltServer['requests'] {
  return server.requests.filter((r) => r.method === method);
}

/** Parse NDJSON output into records. */
export function ndjson(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

// A pseudo-terminal driver: fork the command on a pty of 100x40, answer once when `expect` appears.
const PTY_DRIVER = `
import fcntl, json, os, pty, select, struct, sys, termios
args = json.loads(os.environ['PTY_ARGS'])
answer = os.environ.get('PTY_ANSWER', '').encode()
wait_for = os.environ.get('PTY_EXPECT', '').encode()
pid, fd = pty.fork()
if pid == 0:
    # The size is set before the command starts, which could otherwise read the default size first.
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack('HHHH', 40, 100, 0, 0))
    os.execvp(args[0], args)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 40, 100, 0, 0))
buf = b''
sent = not wait_for
while True:
    ready, _, _ = select.select([fd], [], [], 20)
    if not ready:
        break
    try:
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data:
        break
    buf += data
    if not sent and wait_for in buf:
        os.write(fd, answer)
        sent = True
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(buf)
sys.exit(os.waitstatus_to_exitcode(status))
`;

/**
 * Run the built CLI on a real pseudo-terminal (python3's pty): stdin, stdout and stderr are the
 * terminal, CI is unset so prompts may show. `answer` is typed once `expect` has been printed.
 * Returns everything the terminal showed (stdout and stderr together) and the exit code.
 */
export function runOnPty(
  args: string[],
  opts: { env?: Record<string, string | undefined>; configDir?: string; expect?: string; answer?: string } = {},
): Promise<{ code: number | null; screen: string }> {
  const env = childEnv({ configDir: opts.configDir, env: { CI: undefined, TERM: 'xterm', ...opts.env } });
  env.PTY_ARGS = JSON.stringify([process.execPath, BIN, ...args]);
  if (opts.expect !== undefined) env.PTY_EXPECT = opts.expect;
  if (opts.answer !== undefined) env.PTY_ANSWER = opts.answer;
  return new Promise((resolve, reject) => {
    const child = spawn(python(), ['-c', PTY_DRIVER], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, screen: Buffer.concat(out).toString('utf8') }));
  });
}
