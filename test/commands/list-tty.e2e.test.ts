// On a real terminal: `card list --all` as a table against a service of endless new
// ids shows a spinner counting pages and cards on stderr, prints 2,000 rows, then stops with exit 3.
import { afterEach, describe, expect, it } from 'vitest';
import { type HostileServer, startHostileServer } from '../helpers/hostile-server.js';
import { runOnPty } from '../helpers/pty.js';

let server: HostileServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('card list --all on a terminal', () => {
  it('a spinner while reading; 2,000 rows, then exit 3 pointing to --format', async () => {
    server = await startHostileServer({ mode: 'endless-ids', pageSize: 500 });
    const s = server;
    const r = await runOnPty(['card', 'list', '--all'], { CARDBOARD_BASE_URL: s.url, CARDBOARD_BOARD: s.boardId, CARDBOARD_TOKEN: s.token, NO_COLOR: '1', CI: undefined });
    const plain = r.screen.replace(/\x1b\[[0-?]*[ -/]*[@-~]/g, '');
    expect(r.code, plain.slice(-2000)).toBe(3);
    expect(plain).toContain('Reading the board');
    expect(plain.match(/^endless\d+ /gm)).toHaveLength(2000);
    expect(plain).toContain('error: The terminal table stops at 2,000 cards, and the board has more; the first 2,000 are shown.');
    expect(plain).toContain('--format ndjson, csv or json');
    expect(s.requests.filter((q) => q.url.includes('?page=')).length).toBe(5);
  });
});
