// `webhook listen --tunnel` end to end: the built binary starts the stand-in tools of test/fixtures/tunnel-tools
// (first on PATH; they take the real tools' arguments, print their output formats and relay TCP), the emulator
// delivers through the stand-in's relay, and every test checks that no tool process outlives cardboard.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runMain, tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, SIGNING_KEY, startTestEmulator, TOKEN } from '../helpers/emulator.js';
import { startOnPty } from '../helpers/pty.js';
import { waitFor } from '../helpers/wait.js';
import { post, type RunningListener, startListener, TestApp } from './helpers.js';

const TOOLS = fileURLToPath(new URL('../fixtures/tunnel-tools/bin', import.meta.url));
const cleanup: Array<() => Promise<unknown> | void> = [];

afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** The environment of a run with the stand-ins first on PATH, their pids written to `pidDir`. */
function tunnelEnv(pidDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: `${TOOLS}:${process.env.PATH ?? ''}`,
    STANDIN_NODE: process.execPath,
    STANDIN_PID_DIR: pidDir,
    CARDBOARD_SIGNING_KEY: SIGNING_KEY,
    CARDBOARD_TUNNEL_TIMING: 'check=1s,retry=200ms',
    ...extra,
  };
}

/** Pids of the stand-ins started so far (one file each, `<tool>-<pid>`), oldest first is not guaranteed. */
function pids(dir: string): number[] {
  return readdirSync(dir).map((name) => Number(/-(\d+)$/.exec(name)?.[1])).filter((n) => n > 0);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function listen(args: string[], env: Record<string, string>): Promise<RunningListener> {
  const l = await startListener(args, { env });
  cleanup.push(async () => {
    if (l.child.exitCode === null) await l.stop('SIGKILL');
    for (const pid of pids(env.STANDIN_PID_DIR!)) if (alive(pid)) process.kill(pid, 'SIGKILL');
  });
  return l;
}

async function emulator(): Promise<RunningEmulator> {
  const emu = await startTestEmulator();
  cleanup.push(() => emu.close());
  return emu;
}

/** The URL the listener printed to paste (the n-th one: a changed URL is printed again). */
async function publicUrl(l: RunningListener, n = 1): Promise<string> {
  const re = /(?:Public URL|The public URL changed): (\S+)/g;
  await l.waitFor(new RegExp(`(?:${re.source}[\\s\\S]*){${n}}`));
  return [...l.stderr().matchAll(re)][n - 1]![1]!;
}

const putCard = (emu: RunningEmulator, fields: string[]) =>
  runMain(['card', 'put', ...fields, '--json'], { env: { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN } });

function lines(text: string): Array<Record<string, unknown>> {
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('webhook listen --tunnel', () => {
  it('cloudflared: the public URL is printed and checked, the emulator delivers through it, Ctrl-C ends the tool', async () => {
    const pidDir = tempDir();
    const record = join(tempDir(), 'hooks.jsonl');
    const l = await listen(['--tunnel', 'cloudflared', '--record', record, '--json'], tunnelEnv(pidDir));
    expect(l.stderr()).toMatch(/^Listening on http:\/\/127\.0\.0\.1:\d+\/ \(loopback; starting cloudflared to make it public\)/);
    const url = await publicUrl(l);
    expect(url).not.toBe(l.url);
    await l.waitFor(new RegExp(`reachable through ${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: \\d+ ms`));
    const emu = await emulator();
    emu.boards[BOARD_ID]!.webhookUrl = url;
    const put = await putCard(emu, ['Name=Through the tunnel', 'Status=Open']);
    expect(put.code, put.stderr).toBe(0);
    await l.waitFor(/Through the tunnel/, 'stdout');
    const [tool] = pids(pidDir);
    expect(alive(tool!)).toBe(true);
    const r = await l.stop('SIGINT');
    expect(r.signal, r.stderr).toBe('SIGINT');
    expect(alive(tool!)).toBe(false);
    // Verified (the emulator signs with the board's key) and recorded; the test delivery was neither.
    expect(lines(r.stdout).map((d) => d.body)).toEqual([expect.objectContaining({ Name: 'Through the tunnel', Status: 'Open' })]);
    expect(lines(readFileSync(record, 'utf8')).map((d) => (d.body as { Name?: string }).Name)).toEqual(['Through the tunnel']);
    expect(r.stderr).toContain('stopped: 1 delivered, 0 refused');
    expect(r.stderr + r.stdout + readFileSync(record, 'utf8')).not.toContain(SIGNING_KEY);
  });

  it('ngrok: the test delivery is not forwarded, a real one is; a request without the key is refused and counted; SIGTERM ends the tool', async () => {
    const pidDir = tempDir();
    const app = new TestApp();
    await app.up();
    cleanup.push(() => app.down());
    const l = await listen(['--tunnel', 'ngrok', '--forward-to', app.url], tunnelEnv(pidDir));
    const url = await publicUrl(l);
    await l.waitFor(/reachable through/);
    expect(await post(url, '{"_id":"x"}', 'sk-wrong')).toBe(403);
    expect(await post(url, '{"_id":"c1","Name":"Forwarded"}', SIGNING_KEY)).toBe(200);
    await waitFor(() => app.completed >= 1, { what: 'the app to answer the forwarded delivery' });
    const [tool] = pids(pidDir);
    const r = await l.stop('SIGTERM');
    expect(r.signal, r.stderr).toBe('SIGTERM');
    expect(alive(tool!)).toBe(false);
    expect(app.received.map((q) => JSON.parse(q.body.toString()) as unknown)).toEqual([{ _id: 'c1', Name: 'Forwarded' }]);
    expect(r.stderr).toContain('1 answered 403 so far');
    expect(r.stderr).toContain('stopped: 1 delivered, 1 refused (403: 1)');
  });

  it('a tool that dies is started again; the new URL is printed with the reminder, and a delivery held by the service arrives once it is pasted', async () => {
    const pidDir = tempDir();
    const record = join(tempDir(), 'hooks.jsonl');
    const l = await listen(['--tunnel', 'cloudflared', '--record', record, '--json'], tunnelEnv(pidDir, { CARDBOARD_TUNNEL_TIMING: 'restart=200ms,check=1s,retry=200ms' }));
    const first = await publicUrl(l);
    await l.waitFor(/reachable through/);
    const emu = await emulator();
    emu.boards[BOARD_ID]!.webhookUrl = first;
    const [old] = pids(pidDir);
    process.kill(old!, 'SIGKILL');
    await l.waitFor(/tunnel down: cloudflared exited \(signal SIGKILL\); starting cloudflared again in 200ms/);
    // A change while the tunnel is down: the emulator keeps retrying the old URL.
    const put = await putCard(emu, ['Name=Held', 'Status=Open']);
    expect(put.code, put.stderr).toBe(0);
    const second = await publicUrl(l, 2);
    expect(second).not.toBe(first);
    // The change is several lines, written one by one: wait for the last.
    await l.waitFor(/so none is lost\./);
    expect(l.stderr()).toContain(`Paste it into Card Sources → Webhook URL (it was ${first})`);
    expect(l.stderr()).toContain('the service keeps retrying deliveries to the old URL');
    emu.boards[BOARD_ID]!.webhookUrl = second;
    await l.waitFor(/"Name":"Held"/, 'stdout');
    const now = pids(pidDir);
    expect(now).toHaveLength(2);
    expect(alive(old!)).toBe(false);
    const r = await l.stop('SIGTERM');
    expect(r.signal, r.stderr).toBe('SIGTERM');
    for (const pid of now) expect(alive(pid)).toBe(false);
    expect(lines(readFileSync(record, 'utf8')).map((d) => (d.body as { Name?: string }).Name)).toEqual(['Held']);
  });

  it('a tunnel that stops forwarding (checks fail after one passed) is restarted under a new URL', async () => {
    const pidDir = tempDir();
    const l = await listen(['--tunnel', 'cloudflared'], tunnelEnv(pidDir, { CARDBOARD_TUNNEL_TIMING: 'restart=200ms,check=300ms,retry=100ms' }));
    const first = await publicUrl(l);
    await l.waitFor(/reachable through/);
    const [old] = pids(pidDir);
    process.kill(old!, 'SIGUSR1');
    await l.waitFor(/tunnel down: stopped forwarding: 3 test deliveries in a row failed/);
    const second = await publicUrl(l, 2);
    expect(second).not.toBe(first);
    await l.waitFor(new RegExp(`reachable through ${second.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    const r = await l.stop('SIGINT');
    expect(r.signal, r.stderr).toBe('SIGINT');
    for (const pid of pids(pidDir)) expect(alive(pid)).toBe(false);
  });

  it('ssh: -R to the user server, the URL is --public-url, and a delivery comes through it', async () => {
    const pidDir = tempDir();
    const remote = await freePort();
    const url = `http://127.0.0.1:${remote}/`;
    const l = await listen(['--tunnel', `ssh:deploy@hooks.example.org:${remote}`, '--public-url', url, '--json'], tunnelEnv(pidDir));
    await l.waitFor(new RegExp(`Public URL: http://127\\.0\\.0\\.1:${remote}/ : paste this URL`));
    await l.waitFor(/reachable through/);
    expect(await post(url, '{"_id":"s1"}', SIGNING_KEY)).toBe(200);
    await l.waitFor(/"_id":"s1"/, 'stdout');
    const [tool] = pids(pidDir);
    const r = await l.stop('SIGINT');
    expect(r.signal, r.stderr).toBe('SIGINT');
    expect(alive(tool!)).toBe(false);
  });

  it('kill -9 of cardboard still ends the tool (its watcher sees the pipe close)', async () => {
    const pidDir = tempDir();
    const l = await listen(['--tunnel', 'ngrok'], tunnelEnv(pidDir));
    await publicUrl(l);
    const [tool] = pids(pidDir);
    expect(alive(tool!)).toBe(true);
    await l.stop('SIGKILL');
    await waitFor(() => !alive(tool!), { what: `the tunnel tool (pid ${tool}) to end after cardboard was killed` });
    expect(alive(tool!)).toBe(false);
  });

  it('a tool that ignores SIGTERM is killed: cardboard still exits 0 and leaves nothing behind', async () => {
    const pidDir = tempDir();
    const l = await listen(['--tunnel', 'cloudflared'], tunnelEnv(pidDir, { STANDIN_IGNORE_TERM: '1' }));
    await publicUrl(l);
    const [tool] = pids(pidDir);
    const r = await l.stop('SIGTERM');
    expect(r.signal, r.stderr).toBe('SIGTERM');
    expect(alive(tool!)).toBe(false);
  });

  it('a tool that fails at start: exit 1 with its own reason, and no process left', async () => {
    const pidDir = tempDir();
    const r = await runMain(['webhook', 'listen', '--port', '0', '--tunnel', 'ngrok'], { spawn: true, env: tunnelEnv(pidDir, { STANDIN_MODE: 'fail' }) });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error: --tunnel ngrok: the tunnel did not come up: ngrok exited (code 1): authentication failed: Usage of ngrok requires a verified account and authtoken. (ERR_NGROK_4018)');
    expect(r.stderr).toContain('hint: Run `ngrok config add-authtoken <token>` once');
    expect(pids(pidDir)).toHaveLength(1);
    expect(alive(pids(pidDir)[0]!)).toBe(false);
  });

  it('a tool that prints no URL within the start time: exit 1 naming the time, and the tool is ended', async () => {
    const pidDir = tempDir();
    const r = await runMain(['webhook', 'listen', '--port', '0', '--tunnel', 'cloudflared'], { spawn: true, env: tunnelEnv(pidDir, { STANDIN_MODE: 'silent', CARDBOARD_TUNNEL_TIMING: 'start=2s' }) });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error: --tunnel cloudflared: the tunnel did not come up: cloudflared printed no public URL in 2s');
    expect(r.stderr).toContain('hint: Run with --verbose to see everything cloudflared printed.');
    expect(alive(pids(pidDir)[0]!)).toBe(false);
  });

  it('the tool output is hidden, and shown escaped with --verbose', async () => {
    const pidDir = tempDir();
    const l = await listen(['--tunnel', 'cloudflared', '--verbose'], tunnelEnv(pidDir, { STANDIN_MODE: 'hostile' }));
    await publicUrl(l);
    await l.waitFor(/reachable through/);
    const r = await l.stop('SIGINT');
    expect(r.signal, r.stderr).toBe('SIGINT');
    expect(r.stderr).toContain('cloudflared stderr: ');
    expect(r.stderr).toMatch(/\\u001b|\\x1b|\\e/);
    expect(r.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    const quiet = await listen(['--tunnel', 'cloudflared'], tunnelEnv(tempDir(), { STANDIN_MODE: 'hostile' }));
    await quiet.waitFor(/reachable through/);
    const q = await quiet.stop('SIGINT');
    expect(q.stderr).not.toContain('cloudflared stderr');
    expect(q.stderr).not.toContain('Thank you for trying Cloudflare Tunnel');
  });

  it('refuses --no-verify (exit 2), a missing tool (exit 2, how to install each), and ssh without --public-url', async () => {
    const env = tunnelEnv(tempDir());
    const noVerify = await runMain(['webhook', 'listen', '--port', '0', '--tunnel', '--no-verify'], { env });
    expect(noVerify.code).toBe(2);
    expect(noVerify.stderr).toContain('error: --no-verify cannot be used with --tunnel');
    const noVerifyUrl = await runMain(['webhook', 'listen', '--port', '0', '--public-url', 'https://hooks.example.org/', '--no-verify'], { env });
    expect(noVerifyUrl.code).toBe(2);
    const none = await runMain(['webhook', 'listen', '--port', '0', '--tunnel'], { env: { ...env, PATH: tempDir() } });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('error: --tunnel: neither cloudflared nor ngrok is on PATH.');
    expect(none.stderr).toMatch(/hint: Install one: cloudflared: https:\/\/\S+.*ngrok: https:\/\/ngrok\.com\/download/);
    const sshAlone = await runMain(['webhook', 'listen', '--port', '0', '--tunnel', 'ssh:me@example.org:9000'], { env });
    expect(sshAlone.code).toBe(2);
    expect(sshAlone.stderr).toContain('--tunnel ssh needs --public-url');
    const noKey = await runMain(['webhook', 'listen', '--port', '0', '--tunnel', 'cloudflared'], { env: { ...env, CARDBOARD_SIGNING_KEY: undefined as unknown as string } });
    expect(noKey.code).toBe(4);
    expect(noKey.stderr).not.toContain('--no-verify');
  });

  it('--public-url alone: printed to paste, checked, and a URL that does not reach the listener is said so (the listener stays up)', async () => {
    const port = await freePort();
    const good = await listen(['--port', String(port), '--public-url', `http://127.0.0.1:${port}/`], tunnelEnv(tempDir()));
    await good.waitFor(new RegExp(`Public URL: http://127\\.0\\.0\\.1:${port}/ : paste`));
    await good.waitFor(/reachable through http:\/\/127\.0\.0\.1:\d+\/: \d+ ms/);
    expect((await good.stop('SIGINT')).signal).toBe('SIGINT');
    const elsewhere = await freePort();
    const bad = await listen(['--public-url', `http://127.0.0.1:${elsewhere}/`], tunnelEnv(tempDir(), { CARDBOARD_TUNNEL_TIMING: 'first-check=600ms,retry=200ms,check=1m' }));
    await bad.waitFor(/warning: not reachable through http:\/\/127\.0\.0\.1:\d+\/: no answer \(ECONNREFUSED\)/);
    const r = await bad.stop('SIGTERM');
    expect(r.signal).toBe('SIGTERM');
  });

  it('on a real terminal: the live line shows the tunnel and the refused count, and Ctrl-C ends cardboard and the tool', async () => {
    const pidDir = tempDir();
    const session = startOnPty(['webhook', 'listen', '--port', '0', '--tunnel', 'cloudflared'], tunnelEnv(pidDir), { cols: 160 });
    cleanup.push(() => {
      for (const pid of pids(pidDir)) if (alive(pid)) process.kill(pid, 'SIGKILL');
    });
    const [, url] = await session.waitFor(/Public URL: (\S+)/);
    await session.waitFor(/tunnel reachable · 0 delivered · 0 refused/);
    expect(await post(url!, '{}', 'sk-wrong')).toBe(403);
    await session.waitFor(/tunnel reachable · 0 delivered · 1 refused/);
    session.type('\u0003');
    expect(await session.ended).toEqual({ code: null, signal: 'SIGINT' });
    expect(session.raw()).toContain('stopped: 0 delivered, 1 refused (403: 1)');
    for (const pid of pids(pidDir)) expect(alive(pid)).toBe(false);
  });
});

/** A port free right now on 127.0.0.1. */
async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
