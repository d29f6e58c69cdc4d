// Issue 11, finding 3 on a real terminal: `card list --all` as a table against a service of endless new
// ids shows a spinner counting pages and cards on stderr, prints 2,000 rows, then stops with exit 3.
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, childEnv, tempDir } from '../helpers/cli.js';
import { type HostileServer, startHostileServer } from '../helpers/hostile-server.js';

// The command on a pseudo-terminal (python3's pty) of 100 columns; its output on our stdout, its exit status ours.
const PTY_RELAY = `
import fcntl, json, os, pty, struct, sys, termios
args = json.loads(os.environ['PTY_ARGS'])
pid, fd = pty.fork()
if pid == 0:
    os.execvp(args[0], args)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 40, 100, 0, 0))
while True:
    try:
        data = os.read(fd, 65536)
    except OSError:
        data = b''
    if not data:
        break
    sys.stdout.buffer.write(data)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
`;

let server: HostileServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function onPty(args: string[], env: Record<string, string | undefined>): Promise<{ code: number | null; screen: string }> {
  const child = spawn('python3', ['-c', PTY_RELAY], {
    env: { ...childEnv({ env, configDir: tempDir() }), PTY_ARGS: JSON.stringify([process.execPath, BIN, ...args]), TERM: 'xterm' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // Decoded once at the end: a chunk boundary may fall inside a multi-byte character such as '│'.
  const chunks: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => chunks.push(b));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, screen: Buffer.concat(chunks).toString('utf8') })));
}

describe('card list --all on a terminal', () => {
  it('a spinner while reading; 2,000 rows, then exit 3 pointing to --format', async () => {
    server = await startHostileServer({ mode: 'endless-ids', pageSize: 500 });
    const s = server;
    const r = await onPty(['card', 'list', '--all'], { CARDBOARD_BASE_URL: s.url, CARDBOARD_BOARD: s.boardId, CARDBOARD_TOKEN: s.token, NO_COLOR: '1', CI: undefined });
    const plain = r.screen.replace(/\x1b\[[0-?]*[ -/]*[@-~]/g, '');
    expect(r.code, plain.slice(-2000)).toBe(3);
    expect(plain).toContain('Reading the board');
    expect(plain.match(/│ endless\d+ /g)).toHaveLength(2000);
    expect(plain).toContain('error: The terminal table stops at 2,000 cards, and the board has more; the first 2,000 are shown.');
    expect(plain).toContain('--format ndjson, csv or json');
    expect(s.requests.filter((q) => q.url.includes('?page=')).length).toBe(5);
  });
});
