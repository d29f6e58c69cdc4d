// No wait without end: --timeout bounds a whole request (headers and body), and a
// Retry-After longer than a command may wait stops it at once with the server's wait in the message.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runMain, tempDir } from '../helpers/cli.js';
import { hostileEnv, useHostileServer } from '../helpers/hostile-server.js';

const hostile = useHostileServer(afterEach);
const env = hostileEnv;

describe('--timeout bounds the whole answer', () => {
  it('schema --refresh against a body trickled a byte every 50 ms: each try ends at the deadline, tries as the retry policy says', async () => {
    // The schema's body is ~130 bytes: 6.5 s to trickle whole, and no gap near the 300 ms timeout.
    const s = await hostile('trickle', { trickleMs: 50 });
    const r = await runMain(['schema', '--refresh', '--timeout', '300ms'], { env: env(s) });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`GET ${s.url}/api/aptlet/${s.boardId}/schema failed: no complete answer in 4 tries of 300ms each (ERR_ANSWER_TIMEOUT)`);
    expect(r.stderr).toContain('--timeout bounds one try, not the whole command');
    expect(r.stderr).toContain('allow longer with --timeout');
    expect(r.stderr).not.toMatch(/This is a bug|\n\s+at /);
    // A GET that timed out may be repeated: the client's 4 tries, each cut at the deadline.
    expect(s.requests.map((q) => q.method)).toEqual(['GET', 'GET', 'GET', 'GET']);
  });
});

describe('a Retry-After longer than the command may wait', () => {
  it('card list: Retry-After 999999 (11.6 days) stops at once with exit 1 and the wait in the message', async () => {
    const s = await hostile('huge-retry-after');
    const r = await runMain(['card', 'list'], { env: env(s) });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain('the server asks to wait 11d 13h (Retry-After), longer than the 1m a command waits: stopped.');
    expect(r.stderr).not.toMatch(/This is a bug|\n\s+at /);
    expect(s.requests).toHaveLength(1);
  });

  it('import (the binary): POSTs answered 429 Retry-After 999999 stop the run at once, --give-up-after 5s notwithstanding', async () => {
    const s = await hostile('huge-retry-after', { retryAfterMethods: ['POST'] });
    const file = join(tempDir(), 'cards.csv');
    writeFileSync(file, `Title,Status\n${Array.from({ length: 10 }, (_, i) => `row${i},Open`).join('\n')}\n`);
    const r = await runMain(['import', file, '--give-up-after', '5s', '--concurrency', '2'], { env: env(s), spawn: true });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/The service asks to wait 11d 13h \(Retry-After\); --give-up-after 5s leaves [45]s: stopped \(429 from POST /);
    expect(r.stderr).toContain('run the same command later to resume');
    // Only the tries in flight when the first 429 came back; nothing was waited for.
    const posts = s.requests.filter((q) => q.method === 'POST').length;
    expect(posts).toBeGreaterThanOrEqual(1);
    expect(posts).toBeLessThanOrEqual(2);
  });
});
