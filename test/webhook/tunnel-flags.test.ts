// `--tunnel` and `--public-url` as flags (the choice, the refusals, the tool found on PATH, its environment,
// CARDBOARD_TUNNEL_TIMING), and the test delivery a real listener answers: 200 and nothing recorded, only for
// a token it issued and only past the signing key check.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkPublicFlags, parseTunnel, type PublicFlags } from '../../src/commands/webhook/tunnel-flags.js';
import { tunnelRenderer } from '../../src/commands/webhook/tunnel-render.js';
import { findTool, startFailure, toolEnv } from '../../src/webhook/tunnel/public.js';
import { createContext } from '../../src/context.js';
import { CardboardError, UsageError } from '../../src/errors.js';
import { Secrets } from '../../src/redact.js';
import { DeliveryClient } from '../../src/webhook/client.js';
import { CHECK_HEADER, Listener, type ListenerEvent } from '../../src/webhook/listener.js';
import { RecordFile } from '../../src/webhook/record-file.js';
import { publicUrlCheck } from '../../src/webhook/tunnel/check.js';
import { DEFAULT_TIMING, timingFromEnv } from '../../src/webhook/tunnel/tunnel.js';
import { tempDir } from '../helpers/cli.js';
import { post } from './helpers.js';

/** The error `fn` throws (it must throw). */
function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('did not throw');
}

describe('parseTunnel', () => {
  it('reads each form of --tunnel', () => {
    expect(parseTunnel(true)).toEqual({ tool: 'auto' });
    expect(parseTunnel('cloudflared')).toEqual({ tool: 'cloudflared' });
    expect(parseTunnel('ngrok')).toEqual({ tool: 'ngrok' });
    expect(parseTunnel('ssh:deploy@hooks.example.com:8787')).toEqual({ tool: 'ssh', destination: 'deploy@hooks.example.com', remotePort: 8787 });
    expect(parseTunnel('ssh:hooks.example.com')).toEqual({ tool: 'ssh', destination: 'hooks.example.com', remotePort: undefined });
  });

  it('refuses an unknown tool and an ssh target it cannot pass safely, as usage errors', () => {
    const unknown = thrown(() => parseTunnel('localtunnel'));
    expect(unknown).toBeInstanceOf(UsageError);
    expect(unknown.message).toBe('--tunnel: unknown tool "localtunnel"');
    for (const value of ['ssh', 'ssh:', 'ssh:-oProxyCommand=x', 'ssh:host:0', 'ssh:host:65536']) {
      const err = thrown(() => parseTunnel(value));
      expect(err, value).toBeInstanceOf(UsageError);
      expect(err.message).toBe(`--tunnel ${value}: name your server as ssh:[user@]host[:remote-port]`);
    }
    // Case matters, as for the executables' names.
    expect(thrown(() => parseTunnel('Cloudflared'))).toBeInstanceOf(UsageError);
  });
});

describe('checkPublicFlags', () => {
  const base: PublicFlags = { verify: true, host: '127.0.0.1', port: 8787 };
  const refusal = (f: PublicFlags) => {
    const err = thrown(() => checkPublicFlags(f));
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).exitCode).toBe(2);
    return err as UsageError;
  };

  it('accepts a tunnel or a public URL with the key checked, on loopback', () => {
    for (const f of [
      { ...base, tunnel: { tool: 'auto' } },
      { ...base, tunnel: { tool: 'cloudflared' }, host: 'localhost' },
      { ...base, tunnel: { tool: 'ngrok' }, host: '::1' },
      { ...base, tunnel: { tool: 'ngrok' }, host: '[::1]' },
      { ...base, tunnel: { tool: 'ssh', destination: 'h' }, publicUrl: 'https://hooks.example.com/' },
      { ...base, tunnel: { tool: 'ssh', destination: 'h', remotePort: 9000 }, publicUrl: 'https://hooks.example.com/', port: 0 },
      { ...base, publicUrl: 'https://hooks.example.com/' },
      // --public-url alone: the user's own proxy may reach any interface.
      { ...base, publicUrl: 'https://hooks.example.com/', host: '0.0.0.0' },
    ] satisfies PublicFlags[]) {
      expect(() => checkPublicFlags(f), JSON.stringify(f)).not.toThrow();
    }
  });

  it('refuses --no-verify with --tunnel and with --public-url', () => {
    const withTunnel = refusal({ ...base, verify: false, tunnel: { tool: 'cloudflared' } });
    expect(withTunnel.message).toBe('--no-verify cannot be used with --tunnel: anyone on the internet could post deliveries to a public URL.');
    expect(withTunnel.hint).toMatch(/^Drop --no-verify; give the signing key/);
    const withUrl = refusal({ ...base, verify: false, publicUrl: 'https://hooks.example.com/' });
    expect(withUrl.message).toBe('--no-verify cannot be used with --public-url: anyone on the internet could post deliveries to a public URL.');
  });

  it('refuses a non-loopback --host with --tunnel', () => {
    for (const host of ['0.0.0.0', '192.168.1.20', '::', '[::]', 'example.com']) {
      const err = refusal({ ...base, host, tunnel: { tool: 'auto' } });
      expect(err.message).toBe(`--tunnel needs the listener on loopback (--host ${host} would also expose it to the network).`);
    }
  });

  it('refuses ssh without --public-url, and ssh with --port 0 and no remote port', () => {
    expect(refusal({ ...base, tunnel: { tool: 'ssh', destination: 'h', remotePort: 9000 } }).message).toBe('--tunnel ssh needs --public-url: ssh cannot tell where your server exposes the tunnel.');
    expect(refusal({ ...base, port: 0, tunnel: { tool: 'ssh', destination: 'h' }, publicUrl: 'https://hooks.example.com/' }).message).toBe(
      '--tunnel ssh with --port 0 needs the remote port: --tunnel ssh:[user@]host:REMOTE_PORT',
    );
  });

  it('refuses --public-url with --tunnel cloudflared, ngrok or auto', () => {
    const publicUrl = 'https://hooks.example.com/';
    expect(refusal({ ...base, publicUrl, tunnel: { tool: 'cloudflared' } }).message).toBe('--public-url cannot be used with --tunnel cloudflared: its URL is the one cloudflared prints.');
    expect(refusal({ ...base, publicUrl, tunnel: { tool: 'ngrok' } }).message).toBe('--public-url cannot be used with --tunnel ngrok: its URL is the one ngrok prints.');
    expect(refusal({ ...base, publicUrl, tunnel: { tool: 'auto' } }).message).toBe('--public-url cannot be used with --tunnel auto: its URL is the one the tool prints.');
  });
});

describe('findTool', () => {
  /** A directory holding `names` as files (executable unless `mode` says otherwise). */
  function dir(names: string[], mode = 0o755): string {
    const d = tempDir('cardboard-path-');
    for (const name of names) {
      writeFileSync(join(d, name), '#!/bin/sh\nexit 0\n');
      chmodSync(join(d, name), mode);
    }
    return d;
  }
  const env = (...dirs: string[]) => ({ PATH: dirs.join(delimiter) });

  it('--tunnel alone picks cloudflared before ngrok, whatever their order on PATH', async () => {
    const ngrokDir = dir(['ngrok']);
    const cfDir = dir(['cloudflared']);
    expect(await findTool({ tool: 'auto' }, env(ngrokDir, cfDir))).toEqual({ name: 'cloudflared', file: join(cfDir, 'cloudflared') });
    expect(await findTool({ tool: 'auto' }, env(ngrokDir))).toEqual({ name: 'ngrok', file: join(ngrokDir, 'ngrok') });
  });

  it('the first directory on PATH that holds the tool wins', async () => {
    const first = dir(['cloudflared']);
    const second = dir(['cloudflared']);
    expect(await findTool({ tool: 'cloudflared' }, env(first, second))).toEqual({ name: 'cloudflared', file: join(first, 'cloudflared') });
  });

  it('none on PATH: a usage error whose hint names both install pages', async () => {
    const empty = dir([]);
    const err = await findTool({ tool: 'auto' }, env(empty)).catch((e: unknown) => e as UsageError);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).message).toBe('--tunnel: neither cloudflared nor ngrok is on PATH.');
    expect((err as UsageError).hint).toContain('https://developers.cloudflare.com/cloudflare-one/connections/connect-networks/downloads/');
    expect((err as UsageError).hint).toContain('https://ngrok.com/download');
    // No PATH at all: the same.
    expect(await findTool({ tool: 'auto' }, {}).catch((e: unknown) => e)).toBeInstanceOf(UsageError);
  });

  it('a file that is not executable is not found', async () => {
    const notExec = dir(['cloudflared', 'ngrok', 'ssh'], 0o644);
    expect(await findTool({ tool: 'auto' }, env(notExec)).catch((e: unknown) => e)).toBeInstanceOf(UsageError);
    const named = await findTool({ tool: 'cloudflared' }, env(notExec)).catch((e: unknown) => e as UsageError);
    expect(named).toBeInstanceOf(UsageError);
    expect((named as UsageError).message).toBe('--tunnel cloudflared: cloudflared is not on PATH.');
    // The executable one further on is found instead.
    const exec = dir(['ngrok']);
    expect(await findTool({ tool: 'ngrok' }, env(notExec, exec))).toEqual({ name: 'ngrok', file: join(exec, 'ngrok') });
  });

  it('a named tool missing: the hint says how to install that one', async () => {
    const empty = dir([]);
    const ngrokErr = (await findTool({ tool: 'ngrok' }, env(empty)).catch((e: unknown) => e)) as UsageError;
    expect(ngrokErr.message).toBe('--tunnel ngrok: ngrok is not on PATH.');
    expect(ngrokErr.hint).toContain('https://ngrok.com/download');
    const sshErr = (await findTool({ tool: 'ssh', destination: 'h' }, env(empty)).catch((e: unknown) => e)) as UsageError;
    expect(sshErr.message).toBe('--tunnel ssh: ssh is not on PATH.');
    expect(sshErr.hint).toContain('OpenSSH client');
  });
});

describe('toolEnv, startFailure, timingFromEnv', () => {
  it("the tool's environment drops CARDBOARD_* only", () => {
    const env = { PATH: '/bin', HOME: '/home/dev', NGROK_AUTHTOKEN: 'ng', CARDBOARD_TOKEN: 'tok', CARDBOARD_SIGNING_KEY: 'sk', CARDBOARD_TUNNEL_TIMING: 'start=1s', cardboard_lower: 'kept', XCARDBOARD_Y: 'kept' };
    expect(toolEnv(env)).toEqual({ PATH: '/bin', HOME: '/home/dev', NGROK_AUTHTOKEN: 'ng', cardboard_lower: 'kept', XCARDBOARD_Y: 'kept' });
    // The caller's object is left as it was.
    expect(env.CARDBOARD_TOKEN).toBe('tok');
  });

  it("a start failure is exit 1 with the tool's reason; ngrok's missing authtoken gets its own hint", () => {
    const ng = startFailure('ngrok', 'ngrok exited (code 1): authentication failed: Usage of ngrok requires a verified account and authtoken. (ERR_NGROK_4018)');
    expect(ng).toBeInstanceOf(CardboardError);
    expect(ng).not.toBeInstanceOf(UsageError);
    expect(ng.exitCode).toBe(1);
    expect(ng.message).toBe('--tunnel ngrok: the tunnel did not come up: ngrok exited (code 1): authentication failed: Usage of ngrok requires a verified account and authtoken. (ERR_NGROK_4018)');
    expect(ng.hint).toMatch(/^Run `ngrok config add-authtoken <token>` once/);
    expect(startFailure('cloudflared', 'cloudflared printed no public URL in 30s').hint).toBe('Run with --verbose to see everything cloudflared printed.');
  });

  it('CARDBOARD_TUNNEL_TIMING over the defaults', () => {
    expect(timingFromEnv(undefined)).toEqual(DEFAULT_TIMING);
    expect(timingFromEnv('')).toEqual(DEFAULT_TIMING);
    expect(timingFromEnv('start=10s, check=2m ,retry=500ms,')).toEqual({ ...DEFAULT_TIMING, startMs: 10_000, checkEveryMs: 120_000, retryMs: 500 });
    expect(timingFromEnv('restart=250ms,restart-max=1m,stable=90s,first-check=5s')).toEqual({ ...DEFAULT_TIMING, restartMs: 250, restartMaxMs: 60_000, stableMs: 90_000, firstCheckMs: 5_000 });
  });

  it('CARDBOARD_TUNNEL_TIMING: an unknown name or a bad duration is a usage error naming the variable', () => {
    const unknown = thrown(() => timingFromEnv('start=1s,bogus=2s'));
    expect(unknown).toBeInstanceOf(UsageError);
    expect(unknown.message).toBe('CARDBOARD_TUNNEL_TIMING: unknown setting "bogus"');
    expect((unknown as UsageError).hint).toContain('start=, restart=');
    for (const value of ['start=10', 'check=soon', 'retry']) {
      const err = thrown(() => timingFromEnv(value));
      expect(err, value).toBeInstanceOf(UsageError);
      expect(err.message, value).toContain('CARDBOARD_TUNNEL_TIMING');
    }
  });
});

describe('tunnelRenderer', () => {
  /** The lines a person sees for each event, by kind; `changed` calls as `state url`. */
  function render(verbose = false) {
    const out: string[] = [];
    const changed: string[] = [];
    const ctx = createContext({ env: {}, secrets: new Secrets(['sk-secret']) });
    const status = { info: (m: string) => out.push(`info ${m}`), success: (m: string) => out.push(`success ${m}`), warn: (m: string) => out.push(`warn ${m}`) };
    const onEvent = tunnelRenderer(ctx, 'cloudflared', { status, stderr: (l) => out.push(`stderr ${l}`), verbose, checkEveryMs: 120_000, changed: (s, u) => changed.push(`${s} ${u}`) });
    return { out, changed, onEvent };
  }

  it('the URL to paste on raw stderr; a changed URL framed with the old one; the same URL again as a note', () => {
    const r = render();
    r.onEvent({ type: 'starting', attempt: 1, pid: 7 });
    r.onEvent({ type: 'up', url: 'https://a.trycloudflare.com/hooks', again: false });
    r.onEvent({ type: 'reachable', url: 'https://a.trycloudflare.com/hooks', ms: 181.6, recovered: false });
    r.onEvent({ type: 'down', reason: 'cloudflared exited (code 1)', restartInMs: 2_000 });
    r.onEvent({ type: 'starting', attempt: 2, pid: 8 });
    r.onEvent({ type: 'up', url: 'https://a.trycloudflare.com/hooks', again: true });
    r.onEvent({ type: 'up', url: 'https://b.trycloudflare.com/hooks', previous: 'https://a.trycloudflare.com/hooks', again: true });
    r.onEvent({ type: 'unreachable', url: 'https://b.trycloudflare.com/hooks', reason: 'answered 502 Bad Gateway' });
    r.onEvent({ type: 'reachable', url: 'https://b.trycloudflare.com/hooks', ms: 90, recovered: true });
    expect(r.out).toEqual([
      'stderr Public URL: https://a.trycloudflare.com/hooks : paste this URL into Card Sources → Webhook URL.\n',
      'info reachable through https://a.trycloudflare.com/hooks: 182 ms',
      'warn tunnel down: cloudflared exited (code 1); starting cloudflared again in 2s.',
      'info Starting cloudflared again (try 2).',
      'info Tunnel back up at the same URL: https://a.trycloudflare.com/hooks (nothing to change in Card Sources).',
      // One write: nothing can land between the lines of the block.
      'stderr \n>>> The public URL changed: https://b.trycloudflare.com/hooks\n>>> Paste it into Card Sources → Webhook URL (it was https://a.trycloudflare.com/hooks).\n>>> Until then the service keeps retrying deliveries to the old URL (spec 6: no retry limit), so none is lost.\n\n',
      'warn not reachable through https://b.trycloudflare.com/hooks: answered 502 Bad Gateway. The tunnel stays up and is checked again every 2m; the service retries each delivery until it arrives.',
      'info reachable again through https://b.trycloudflare.com/hooks: 90 ms',
    ]);
    expect(r.changed).toEqual([
      'up https://a.trycloudflare.com/hooks',
      'reachable https://a.trycloudflare.com/hooks',
      'down ',
      'up https://a.trycloudflare.com/hooks',
      'up https://b.trycloudflare.com/hooks',
      'unreachable https://b.trycloudflare.com/hooks',
      'reachable https://b.trycloudflare.com/hooks',
    ]);
  });

  it('a name that does not resolve here is explained: the service resolves it on its own', () => {
    const r = render();
    r.onEvent({ type: 'unreachable', url: 'https://c.trycloudflare.com/', reason: 'no answer (ENOTFOUND)' });
    r.onEvent({ type: 'unreachable', url: 'https://c.trycloudflare.com/', reason: 'answered 530' });
    expect(r.out[0]).toContain('no answer (ENOTFOUND). The name does not resolve here');
    expect(r.out[0]).toContain('the service looks it up on its own');
    expect(r.out[1]).not.toContain('does not resolve');
  });

  it("the tool's output only with --verbose, escaped and with secrets redacted", () => {
    const quiet = render(false);
    quiet.onEvent({ type: 'output', stream: 'stderr', line: 'INF hello' });
    expect(quiet.out).toEqual([]);
    const verbose = render(true);
    verbose.onEvent({ type: 'output', stream: 'stdout', line: 'key sk-secret \u001b[2Jcleared' });
    expect(verbose.out).toHaveLength(1);
    expect(verbose.out[0]).not.toContain('sk-secret');
    expect(verbose.out[0]).not.toContain('\u001b');
    expect(verbose.out[0]).toMatch(/^stderr cloudflared stdout: key \*+ /);
  });
});

describe('the test delivery through a real listener', () => {
  const KEY = 'sk-test-0123456789';
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const undo of cleanup.splice(0).reverse()) await undo();
  });

  async function listen() {
    const path = join(tempDir(), 'record.jsonl');
    const record = new RecordFile(path);
    const events: ListenerEvent[] = [];
    const listener = new Listener({ host: '127.0.0.1', port: 0, path: '/hooks', key: KEY, maxBody: 1 << 20, record, onEvent: (e) => events.push(e) });
    const url = await listener.start();
    cleanup.push(() => listener.stop());
    const client = new DeliveryClient();
    cleanup.push(() => client.close());
    /** The record file once every write is flushed (the listener stopped). */
    const recorded = async () => {
      await listener.stop();
      return readFileSync(path, 'utf8');
    };
    return { listener, url, events, client, recorded };
  }

  const signal = () => new AbortController().signal;

  it('passes with its time, and leaves nothing behind: no record line, no delivery event', async () => {
    const { listener, url, events, client, recorded } = await listen();
    const check = publicUrlCheck(listener, KEY, client);
    const first = await check(url, signal());
    expect(first).toEqual({ ok: true, ms: expect.any(Number) });
    expect((first as { ms: number }).ms).toBeGreaterThanOrEqual(0);
    // Each check carries a fresh token: a second passes too.
    expect((await check(url, signal())).ok).toBe(true);
    expect(listener.stats.delivered).toBe(0);
    expect(await recorded()).toBe('');
    expect(events.map((e) => e.type)).toEqual(['listening']);
  });

  it('the check header with a token the listener did not issue is an ordinary delivery: recorded', async () => {
    const { url, events, recorded } = await listen();
    expect(await post(url, '{"_id":"c1"}', KEY, { [CHECK_HEADER]: '0123456789abcdef0123456789abcdef' })).toBe(200);
    const lines = (await recorded()).trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ seq: 1, method: 'POST', path: '/hooks' });
    expect(lines[0]).toContain('0123456789abcdef0123456789abcdef');
    expect(events.filter((e) => e.type === 'delivery')).toHaveLength(1);
  });

  it('an issued token is answered 200 and not recorded, even after its wait ended; never past a wrong key', async () => {
    const { listener, url, events, recorded } = await listen();
    const expected = listener.expectCheck();
    let arrived = false;
    void expected.arrived.then(() => (arrived = true));
    // A wrong key with the right token: 403, and the token is not marked as arrived.
    expect(await post(url, '{}', 'wrong-key', { [CHECK_HEADER]: expected.token })).toBe(403);
    await new Promise((resolve) => setImmediate(resolve));
    expect(arrived).toBe(false);
    expect(await post(url, '{}', KEY, { [CHECK_HEADER]: expected.token })).toBe(200);
    await expected.arrived;
    expected.done();
    // A late copy of the same check (the provider retried it): still not a delivery.
    expect(await post(url, '{}', KEY, { [CHECK_HEADER]: expected.token })).toBe(200);
    expect(listener.stats).toMatchObject({ delivered: 0, rejected: { 403: 1 } });
    expect(await recorded()).toBe('');
    expect(events.filter((e) => e.type === 'delivery')).toEqual([]);
  });

  it('signed with another key: the listener answers 403 and the check fails with that answer', async () => {
    const { listener, url, client, recorded } = await listen();
    const result = await publicUrlCheck(listener, 'not-the-key', client)(url, signal());
    expect(result).toEqual({ ok: false, reason: 'answered 403 Forbidden: wrong x-signingKey' });
    expect(listener.stats.rejected[403]).toBe(1);
    expect(await recorded()).toBe('');
  });

  it('a 200 from some other server at the URL does not count', async () => {
    const { listener, client } = await listen();
    const other: Server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('OK\n'));
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => new Promise<void>((resolve) => other.close(() => resolve())));
    const result = await publicUrlCheck(listener, KEY, client)(`http://127.0.0.1:${(other.address() as AddressInfo).port}/hooks`, signal());
    expect(result).toEqual({ ok: false, reason: 'answered 200, but not by this listener (another receiver at that URL?)' });
  });

  it('nothing listening: no answer, with the reason', async () => {
    const { listener, client } = await listen();
    const closed: Server = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await publicUrlCheck(listener, KEY, client)(`http://127.0.0.1:${port}/hooks`, signal())).toEqual({ ok: false, reason: 'no answer (ECONNREFUSED)' });
  });
});
