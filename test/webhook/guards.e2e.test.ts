import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/webhook/limits.js';
import { runMain, tempDir } from '../helpers/cli.js';
import { post, type RunningListener, startListener } from './helpers.js';

const KEY = 'sk-guards-0123456789';
const env = { CARDBOARD_SIGNING_KEY: KEY };
let listeners: RunningListener[] = [];
afterEach(async () => {
  for (const l of listeners) if (l.child.exitCode === null) await l.stop('SIGKILL');
  listeners = [];
});

async function listen(args: string[], extraEnv: Record<string, string> = {}): Promise<RunningListener> {
  const l = await startListener(args, { env: { ...env, ...extraEnv } });
  listeners.push(l);
  return l;
}

describe('the signing key over plain http', () => {
  it('is refused (exit 2, nothing sent) for a remote http:// target of send, replay and listen --forward-to', async () => {
    const record = join(tempDir(), 'r.jsonl');
    const runs = [
      ['webhook', 'send', '--to', 'http://example.com/hook'],
      ['webhook', 'send', '--to', 'http://example.com/hook', '--wrong-key'],
      ['webhook', 'replay', record, '--to', 'http://192.0.2.10:3000/hook'],
      ['webhook', 'listen', '--port', '0', '--forward-to', 'http://hooks.example.com/in'],
    ];
    for (const args of runs) {
      const r = await runMain(args, { env });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/Refusing plain http:\/\/ to \S+ \((--to|--forward-to)\): the signing key would cross the network unencrypted/);
      expect(r.stderr).toContain('--insecure');
      expect(r.stderr + r.stdout).not.toContain(KEY);
    }
  });

  it('is allowed to loopback, and anywhere with --insecure (the same rule as board add for the token)', async () => {
    // Loopback: passes the check and fails only for want of a receiver (exit 1, not 2).
    const local = await runMain(['webhook', 'send', '--to', 'http://127.0.0.1:9/hook', '--timeout', '2s'], { env });
    expect(local.code).toBe(1);
    // --insecure lets the remote URL through the check: the flags parse, and the run fails later on the
    // missing record file, before anything is sent.
    const insecure = await runMain(['webhook', 'replay', join(tempDir(), 'none.jsonl'), '--to', 'http://example.com/hook', '--insecure'], { env });
    expect(insecure.code).toBe(2);
    expect(insecure.stderr).toContain('no such record file');
    const token = await runMain(['board', 'add', 'w', '--url', 'http://example.com/api/aptlet/b1', '--token-stdin'], { input: 'tok\n' });
    expect(token.code).toBe(2);
    expect(token.stderr).toContain('Refusing plain http:// to example.com: the token would cross the network unencrypted');
  });
});

describe('webhook listen guards', () => {
  it('refuses --forward-to its own address (exit 2) before binding, whatever the loopback spelling', async () => {
    for (const target of ['http://localhost:48787/', 'http://127.0.0.1:48787/hooks', 'http://[::1]:48787/']) {
      const r = await runMain(['webhook', 'listen', '--port', '48787', '--forward-to', target], { env });
      expect(r.code, target).toBe(2);
      expect(r.stderr).toContain('is this listener itself (port 48787)');
    }
  });

  it('a second listener on the same --record file exits 2 naming the first one; the lock goes with the first', async () => {
    const record = join(tempDir(), 'hooks.jsonl');
    const first = await listen(['--record', record]);
    const second = await runMain(['webhook', 'listen', '--port', '0', '--record', record], { env });
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`--record ${record} is in use by another webhook listener: process ${first.child.pid}`);
    expect(await post(first.url, '{"_id":"a"}', KEY)).toBe(200);
    const r = await first.stop('SIGTERM');
    expect(r.signal).toBe('SIGTERM');
    expect(existsSync(`${record}.lock`)).toBe(false);
    expect(readFileSync(record, 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
    // Free again: a new listener takes the file and continues its numbering.
    const third = await listen(['--record', record]);
    expect(await post(third.url, '{"_id":"b"}', KEY)).toBe(200);
    await third.stop('SIGTERM');
    expect(readFileSync(record, 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual([1, 2]);
  });

  it('answers 405 to a GET (stderr note, not a delivery) and closes idle connections after the env-set idle timeout', async () => {
    // 2 s: a client on a loaded machine still gets its request in after connecting (a shorter idle timeout
    // closed the GET's own connection now and then), and the default (10 s) is far enough to tell apart.
    const l = await listen(['--json'], { CARDBOARD_WEBHOOK_TIMEOUTS: 'idle=2s' });
    const res = await fetch(l.url, { headers: { 'x-signingKey': KEY } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    const { connect } = await import('node:net');
    const connected = Date.now();
    const socket = connect(Number(new URL(l.url).port), '127.0.0.1');
    socket.on('error', () => {});
    await new Promise((resolve) => socket.once('close', resolve));
    // Closed by the listener, not the test timeout, well before the 10 s default would have.
    expect(Date.now() - connected).toBeLessThan(DEFAULT_LIMITS.idleMs);
    expect(await post(l.url, '{"_id":"ok"}', KEY)).toBe(200);
    const r = await l.stop('SIGTERM');
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('405 GET /: only POST is a delivery');
  });
});
