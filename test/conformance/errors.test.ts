import { describe, expect, it } from 'vitest';
import type { ErrorStyle } from './alt-server.js';
import { skippingClock } from '../helpers/sim.js';
import { noLeak, run, seen, start } from './helpers.js';

/** stderr is exactly `error: …` and `hint: …`, one line each, with no markup. */
function twoLines(stderr: string): [string, string] {
  const lines = stderr.trimEnd().split('\n');
  expect(lines, stderr).toHaveLength(2);
  expect(lines[0]).toMatch(/^error: /);
  expect(lines[1]).toMatch(/^hint: /);
  expect(stderr).not.toMatch(/<\/|<(!doctype|html|head|body|h1|p|script|style)\b/i);
  return [lines[0]!, lines[1]!];
}

describe('error bodies of every shape become one clean line', () => {
  const cases: [ErrorStyle, string][] = [
    ['message', ': No card nope/ü'],
    ['reason', ': No card nope/ü'],
    ['boom', ': No card nope/ü'],
    ['json-charset', ': No card nope/ü'],
    ['text', ': No card nope/ü'],
    ['html', ': 404 Not Found No card nope/ü alt-server'],
    ['empty', ''],
  ];
  for (const [errorStyle, tail] of cases) {
    it(`${errorStyle}: 404 on card get → exit 1 with the server's message and a hint`, async () => {
      const s = await start({ errorStyle });
      const r = await run(s, ['card', 'get', 'nope/ü']);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      const [error, hint] = twoLines(r.stderr);
      expect(error).toBe(`error: 404 Not Found from GET ${s.url}/api/aptlet/board-7/card/nope%2F%C3%BC${tail}`);
      expect(hint).toBe('hint: Check the board id (`cardboard board show`) and the card id.');
    });
  }

  it('a 404 HTML page for an unknown board shows no HTML', async () => {
    const s = await start({ htmlNotFound: true, errorStyle: 'message' });
    const r = await run(s, ['schema'], { env: { CARDBOARD_BOARD: 'other board' } });
    expect(r.code).toBe(1);
    const [error] = twoLines(r.stderr);
    expect(error).toContain('404 Not Found from GET');
    expect(error).toContain('No board other board');
  });

  it('terminal escape sequences in a server message are not passed to the terminal', async () => {
    const s = await start();
    s.faults.push({ status: 400, body: 'bad \u001b[2J\u001b]0;pwned\u0007request\u0000' });
    const r = await run(s, ['card', 'put', 'Title=x']);
    expect(r.code).toBe(1);
    // Escaped by the one policy of every line for a person (ESC as \e), not dropped: what the server sent stays readable.
    expect(r.stderr).toBe(`error: 400 Bad Request from GET ${s.url}/api/aptlet/board-7/schema: bad \\e[2J\\e]0;pwned\\arequest\\x00\n`);
    expect(r.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
  });
});

describe('a body refused for its size', () => {
  it('413 to card put and to comment (text bodies, another server): the size sent is named, and what the server said', async () => {
    const s = await start({ errorStyle: 'text' });
    s.faults.push({ method: 'POST', status: 413, body: 'entity too large' });
    const put = await run(s, ['card', 'put', `Title=${'t'.repeat(3000)}`]);
    expect(put.code).toBe(1);
    const [error, hint] = twoLines(put.stderr);
    expect(error).toBe(`error: 413 Payload Too Large from POST ${s.url}/api/aptlet/board-7: entity too large (the card sent was 2.9 kB)`);
    expect(hint).toBe('hint: The server refused a 2.9 kB card as too large; it may limit the size of a card: try a smaller one.');
    const [id] = s.seed(1);
    s.faults.push({ method: 'POST', status: 413 });
    const comment = await run(s, ['comment', id!, 'c'.repeat(5000)]);
    expect(comment.code).toBe(1);
    expect(twoLines(comment.stderr)[0]).toMatch(/^error: 413 Payload Too Large from POST .*\/comment \(the comment sent was 4\.9 kB\)$/);
  });
});

describe('a refused token', () => {
  for (const authStatus of [403, 401]) {
    for (const errorStyle of ['reason', 'html', 'empty'] as const) {
      it(`${authStatus} with a ${errorStyle} body → exit 4, token hint, no token in the output`, async () => {
        const s = await start({ authStatus, errorStyle });
        const wrong = 'wrong-token-xyz-123';
        const r = await run(s, ['card', 'list'], { token: wrong });
        noLeak(s, r, [wrong]);
        expect(r.code).toBe(4);
        const [error, hint] = twoLines(r.stderr);
        expect(error).toMatch(new RegExp(`^error: ${authStatus} (Forbidden|Unauthorized) from GET `));
        expect(hint).toMatch(/token/);
        // Never retried (a 401 or 403 cannot succeed on a retry), and the token went in the header only.
        expect(s.requests).toHaveLength(1);
        expect(s.requests[0]!.headers['x-token']).toBe(wrong);
      });
    }
  }
});

describe('retries and transport choices', () => {
  it('503 with Retry-After as an HTTP date: the GET waits until that date and succeeds', async () => {
    const s = await start();
    s.seed(2);
    const at = new Date(Date.now() + 20_000).toUTCString();
    s.faults.push({ method: 'GET', status: 503, headers: { 'retry-after': at }, body: 'down for maintenance' });
    const time = skippingClock();
    const r = await run(s, ['card', 'list', '--format', 'ndjson'], { context: time.context });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(2);
    expect(seen(s, 'GET').map((q) => q.status)).toEqual([503, 200]);
    // An HTTP date is to the second: 19-20 s from the answer (a backoff of its own would be far shorter).
    expect(time.waited.some((ms) => ms >= 19_000)).toBe(true);
  });

  it('429 on a POST proves nothing was stored: sent again after Retry-After, one card', async () => {
    const s = await start();
    s.faults.push({ method: 'POST', status: 429, headers: { 'retry-after': '0' }, body: 'slow down' });
    const time = skippingClock();
    const r = await run(s, ['card', 'put', 'Title=x'], { context: time.context });
    expect(r.code, r.stderr).toBe(0);
    expect(seen(s, 'POST').map((q) => q.status)).toEqual([429, s.opts.createdStatus]);
    expect(time.waited.some((ms) => ms >= 1000)).toBe(true);
  });

  it('429 on every POST: each wait said on stderr, exit 1 at the try cap naming the limit (no --rate)', async () => {
    const s = await start();
    for (let i = 0; i < 50; i++) s.faults.push({ method: 'POST', status: 429, headers: { 'retry-after': '0' }, body: 'slow down' });
    // Waits of about 1.5 s each (the floor, plus jitter) would take over a minute: time skips them instead.
    const { waited, context } = skippingClock();
    const r = await run(s, ['card', 'put', 'Title=x'], { context });
    expect(r.code).toBe(1);
    const waits = r.stderr.split('\n').filter((l) => /^Rate limited \(429\); waiting [12](\.\d)?s \(Retry-After: 0s; cardboard waits at least 1s(, plus jitter)?\), then trying again…$/.test(l));
    expect(waits).toHaveLength(49);
    // Each retry's own wait is at least the floor (the rate gate may add a short sleep to the end of its pause).
    expect(waited.filter((ms) => ms >= 1000)).toHaveLength(49);
    const [error, hint] = twoLines(r.stderr.split('\n').filter((l) => !l.startsWith('Rate limited')).join('\n'));
    expect(error).toContain('429 Too Many Requests from POST');
    expect(error).toContain('still rate-limited after 50 tries: stopped.');
    expect(hint).toContain('120 requests a minute per API key');
    expect(hint).not.toContain('--rate');
    expect(seen(s, 'POST')).toHaveLength(50);
  });

  it('Connection: close on every answer, one card per page: all pages still walk', async () => {
    const s = await start({ connectionClose: true, pageSize: 1 });
    s.seed(6);
    const r = await run(s, ['card', 'list', '--all', '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(s.cards);
  });

  it('no Accept-Encoding is sent, so a server gzipping only when asked sends plain JSON', async () => {
    const s = await start({ gzip: 'if-asked' });
    s.seed(3);
    const r = await run(s, ['card', 'list', '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(s.cards);
    expect(s.requests.every((q) => q.headers['accept-encoding'] === undefined || !/gzip/.test(String(q.headers['accept-encoding'])))).toBe(true);
  });

  it('a server that gzips anyway (RFC 9110 12.5.3: no Accept-Encoding means any coding) is decoded', async () => {
    const s = await start({ gzip: 'always' });
    s.seed(3);
    const list = await run(s, ['card', 'list', '--format', 'json']);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual(s.cards);
    const put = await run(s, ['card', 'put', 'Title=zipped']);
    expect(put.code, put.stderr).toBe(0);
    expect(put.stdout).toBe(`${s.cards[3]!._id}\n`);
    s.opts.errorStyle = 'text';
    const missing = await run(s, ['card', 'get', 'nope']);
    expect(missing.code).toBe(1);
    expect(twoLines(missing.stderr)[0]).toMatch(/: No card nope$/);
  });

  for (const jsonType of ['text/plain', 'text/html; charset=utf-8', 'application/octet-stream', '']) {
    it(`JSON bodies labelled "${jsonType}" are still read as JSON`, async () => {
      const s = await start({ jsonType });
      s.seed(2);
      const schema = await run(s, ['schema', '--json']);
      expect(schema.code, schema.stderr).toBe(0);
      expect(JSON.parse(schema.stdout)).toEqual(s.fields);
      const put = await run(s, ['card', 'put', 'Title=x']);
      expect(put.code, put.stderr).toBe(0);
      expect(put.stdout).toBe(`${s.cards[2]!._id}\n`);
    });
  }

  it('JSON bodies that start with a byte order mark', async () => {
    const s = await start({ bom: true });
    s.seed(2);
    const r = await run(s, ['schema', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(s.fields);
    const list = await run(s, ['card', 'list', '--all', '--format', 'json']);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual(s.cards);
  });

  it('a server that went away: exit 1, the base URL hint', async () => {
    const s = await start();
    const url = s.url;
    await s.close();
    // Tried again after backoffs (a refused connection may be a restart): time skips them.
    const r = await run(s, ['schema'], { env: { CARDBOARD_BASE_URL: url }, context: skippingClock().context });
    expect(r.code).toBe(1);
    const [error, hint] = twoLines(r.stderr);
    expect(error).toContain('connection refused (ECONNREFUSED)');
    expect(hint).toContain('base URL');
  });
});
