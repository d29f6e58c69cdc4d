import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';
import { post, type RunningListener, startListener } from './helpers.js';

const KEY = 'sk-listen-123';
let listener: RunningListener | undefined;

afterEach(async () => {
  if (listener && listener.child.exitCode === null) await listener.stop('SIGKILL');
  listener = undefined;
});

function lines(text: string): Array<Record<string, unknown>> {
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('webhook listen', () => {
  it('refuses to start without a signing key (exit 4) and names the ways to give one', async () => {
    const r = await runCli(['webhook', 'listen', '--port', '0']);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('no webhook signing key');
    expect(r.stderr).toContain('--signing-key-stdin');
    expect(r.stderr).toContain('--no-verify');
  });

  it('answers 200 only to the exact key; wrong, missing, suffixed and prefixed keys get 403 and leave no trace', async () => {
    const dir = tempDir();
    const record = join(dir, 'r.jsonl');
    listener = await startListener(['--signing-key-stdin', '--record', record, '--json'], { input: `${KEY}\n` });
    expect(listener.stderr().split('\n')[0]).toMatch(/^Listening on http:\/\/127\.0\.0\.1:\d+\/ /);
    const good = '{"_id":"c1","Name":"Good"}';
    expect(await post(listener.url, good, KEY)).toBe(200);
    expect(await post(listener.url, '{"_id":"bad1"}', 'sk-wrong')).toBe(403);
    expect(await post(listener.url, '{"_id":"bad2"}')).toBe(403);
    expect(await post(listener.url, '{"_id":"bad3"}', `${KEY}x`)).toBe(403);
    expect(await post(listener.url, '{"_id":"bad4"}', KEY.slice(0, -1))).toBe(403);
    expect(await post(listener.url, '{"_id":"bad5"}', '')).toBe(403);
    expect(await post(listener.url.replace(/\/$/, '/other'), good, KEY)).toBe(404);
    expect(await post(listener.url, 'plain text, not JSON', KEY)).toBe(200);
    const r = await listener.stop('SIGTERM');
    expect(r.signal).toBe('SIGTERM');
    const printed = lines(r.stdout);
    expect(printed.map((l) => l.body)).toEqual([{ _id: 'c1', Name: 'Good' }, 'plain text, not JSON']);
    expect(Object.keys(printed[0]!)).toEqual(['seq', 'receivedAt', 'method', 'path', 'headers', 'body', 'change', 'cardId', 'changes']);
    expect((printed[0]!.headers as Record<string, string>)['x-signingKey']).toBe('***');
    const recorded = lines(readFileSync(record, 'utf8'));
    expect(recorded.map((l) => l.seq)).toEqual([1, 2]);
    expect(Buffer.from(recorded[0]!.bodyBase64 as string, 'base64').toString()).toBe(good);
    expect(readFileSync(record, 'utf8')).not.toContain('bad');
    expect(readFileSync(record, 'utf8') + r.stdout + r.stderr).not.toContain(KEY);
    expect(r.stderr).toContain('5 answered 403 so far');
    expect(r.stderr).toContain('stopped: 2 delivered, 6 refused (403: 5, 404: 1)');
  });

  it('answers 413 over --max-body and records nothing; SIGINT also stops cleanly with exit 0', async () => {
    const record = join(tempDir(), 'r.jsonl');
    listener = await startListener(['--max-body', '100b', '--record', record], { env: { CARDBOARD_SIGNING_KEY: KEY } });
    expect(await post(listener.url, 'x'.repeat(101), KEY)).toBe(413);
    expect(await post(listener.url, 'x'.repeat(100), KEY)).toBe(200);
    const r = await listener.stop('SIGINT');
    expect(r.signal).toBe('SIGINT');
    expect(r.stderr).toContain('Verifying x-signingKey with the key from CARDBOARD_SIGNING_KEY');
    expect(lines(readFileSync(record, 'utf8')).map((l) => l.body)).toEqual(['x'.repeat(100)]);
  });

  it('with --no-verify accepts any key and says so loudly on stderr', async () => {
    listener = await startListener(['--no-verify', '--json']);
    expect(await post(listener.url, '{"a":1}', 'anything')).toBe(200);
    expect(await post(listener.url, '{"a":2}')).toBe(200);
    const r = await listener.stop();
    expect(r.signal).toBe('SIGTERM');
    expect(r.stderr).toMatch(/warning: NOT VERIFYING x-signingKey/);
    expect(lines(r.stdout).map((l) => l.body)).toEqual([{ a: 1 }, { a: 2 }]);
  });

  it('rejects bad flags with exit 2', async () => {
    const bad = [['--max-body', 'lots'], ['--forward-to', 'ftp://x'], ['--path', 'hooks'], ['--forward-timeout', '0s']];
    for (const args of bad) {
      const r = await runCli(['webhook', 'listen', '--port', '0', ...args], { env: { CARDBOARD_SIGNING_KEY: KEY } });
      expect(r.code, args.join(' ')).toBe(2);
    }
  });
});
