import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { writeCards } from './helpers.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

/** A service whose key is over its limit for good: the schema answers, every POST gets 429 Retry-After: 1. */
async function alwaysThrottled(): Promise<{ url: string; posts: () => number }> {
  let posts = 0;
  server = createServer((req, res) => {
    req.resume();
    if (req.method === 'GET' && req.url === '/api/aptlet/b1/schema') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(['Name', 'Status', 'Owner', 'Priority'].map((name, i) => ({ name, uuid: `u${i}` }))));
      return;
    }
    posts++;
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
    res.end('{"reason":"Rate limit exceeded. Try again shortly."}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, posts: () => posts };
}

describe('import against a key that stays rate-limited', () => {
  it('stops after --give-up-after instead of waiting forever, and says how to resume', async () => {
    const svc = await alwaysThrottled();
    const file = writeCards(5, 'throttled');
    const r = await runCli(['import', file, '--give-up-after', '2s', '--concurrency', '1'], {
      env: { CARDBOARD_BASE_URL: svc.url, CARDBOARD_BOARD: 'b1', CARDBOARD_TOKEN: 'tok-throttled' },
    });
    expect(r.code, r.stderr).toBe(1);
    // Stopped at the limit, or at the 429 whose Retry-After (1 s) would end past it. How long the spell
    // lasted is the real clock's (Retry-After plus jitter, plus whatever a loaded machine adds: the exact
    // waits are proven in simulated time, give-up.test.ts); the message must agree with itself.
    const stopped = /answered nothing but 429 for (?:2s; stopped|(\d+)s and asks to wait 1s \(Retry-After\); --give-up-after 2s leaves (\d+)ms: stopped)/.exec(r.stderr);
    expect(stopped, r.stderr).not.toBeNull();
    if (stopped![2] !== undefined) {
      // Left: something (the spell was under the limit), but less than the 1 s asked for.
      const left = Number(stopped![2]);
      expect(left, r.stderr).toBeGreaterThan(0);
      expect(left, r.stderr).toBeLessThan(1000);
      expect(Number(stopped![1]), r.stderr).toBe(Math.round((2000 - left) / 1000));
    }
    expect(r.stderr).toMatch(/hint: .*run the same command later to resume/);
    expect(r.stderr).not.toContain('tok-throttled');
    // It kept trying while it waited (at Retry-After pace), then gave up.
    expect(svc.posts()).toBeGreaterThanOrEqual(2);
  });

  it('rejects a --give-up-after that is not a duration (exit 2, nothing sent)', async () => {
    const svc = await alwaysThrottled();
    const r = await runCli(['import', writeCards(1, 'x'), '--give-up-after', 'soon'], {
      env: { CARDBOARD_BASE_URL: svc.url, CARDBOARD_BOARD: 'b1', CARDBOARD_TOKEN: 'tok' },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--give-up-after "soon" is not a duration');
    expect(svc.posts()).toBe(0);
  });
});
