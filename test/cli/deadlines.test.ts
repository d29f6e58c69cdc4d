// Issue 11, finding 4: waits without end. --timeout bounds a whole request (headers and body), and a
// Retry-After longer than a command may wait stops it at once with the server's wait in the message.
import { afterEach, describe, expect, it } from 'vitest';
import { runMain } from '../helpers/cli.js';
import { type HostileMode, type HostileOptions, type HostileServer, startHostileServer } from '../helpers/hostile-server.js';

let server: HostileServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function hostile(mode: HostileMode, extra: Partial<HostileOptions> = {}): Promise<HostileServer> {
  server = await startHostileServer({ mode, ...extra });
  return server;
}

const env = (s: HostileServer) => ({ CARDBOARD_BASE_URL: s.url, CARDBOARD_BOARD: s.boardId, CARDBOARD_TOKEN: s.token });

describe('--timeout bounds the whole answer', () => {
  it('schema --refresh against a body trickled a byte every 50 ms: each try ends at the deadline, tries as the retry policy says', async () => {
    // The schema's body is ~130 bytes: 6.5 s to trickle whole, and no gap near the 300 ms timeout.
    const s = await hostile('trickle', { trickleMs: 50 });
    const r = await runMain(['schema', '--refresh', '--timeout', '300ms'], { env: env(s) });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`GET ${s.url}/api/aptlet/${s.boardId}/schema failed: no complete answer within 300ms (ERR_ANSWER_TIMEOUT)`);
    expect(r.stderr).toContain('allow longer with --timeout');
    expect(r.stderr).not.toMatch(/This is a bug|\n\s+at /);
    // A GET that timed out may be repeated: the client's 4 tries, each cut at the deadline.
    expect(s.requests.map((q) => q.method)).toEqual(['GET', 'GET', 'GET', 'GET']);
  });
});
