// The inspector's replay with edits (the page's editor and the JSON API): what reaches the app, what is
// refused, the answer the page gets and the report to the listener.
import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CardStates } from '../../src/webhook/changes.js';
import { jsonErrorOffset } from '../../src/webhook/json-bytes.js';
import type { ReplayEvent } from '../../src/webhook/inspector/replay.js';
import { act, type Cleanup, delivery, expectSecurityHeaders, KEY, raw, receiver, startInspector } from './inspector-helpers.js';

let cleanup: Cleanup = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

const BODY = '{"_id":"c1","Name":"Alpha","Status":"Open"}';

async function withDelivery(opts: Parameters<typeof startInspector>[1] = {}) {
  const replays: ReplayEvent[] = [];
  const i = await startInspector(cleanup, { onReplay: (e) => replays.push(e), ...opts });
  i.add(delivery(3, BODY, { 'X-Custom': 'recorded' }), new CardStates().apply(Buffer.from(BODY)), { recorded: false });
  return { i, replays };
}

describe('inspector: edited replay', () => {
  it('sends the edited headers in place of the recorded ones and the edited body, with the listener\'s key and its own content-length', async () => {
    const app = await receiver(cleanup);
    const { i, replays } = await withDelivery();
    const edited = '{"_id":"c1","Name":"Alpha","Status":"Done","Note":"é"}';
    const headers = { 'Content-Type': 'application/json', 'X-Edited': 'yes', 'Content-Length': '3', Connection: 'close', 'Transfer-Encoding': 'chunked', Host: 'evil.example' };
    const r = await act(i, 'POST', 'replay', { seq: 3, url: app.url, headers, body: edited });
    expect(r.status).toBe(200);
    expectSecurityHeaders(r);
    const got = app.got[0]!;
    expect(got.body.toString('utf8')).toBe(edited);
    expect(got.headers['x-signingkey']).toBe(KEY);
    expect(got.headers['x-edited']).toBe('yes');
    // The recorded headers are replaced, not merged.
    expect(got.headers['x-custom']).toBeUndefined();
    expect(got.headers['user-agent']).toBeUndefined();
    expect(got.headers['content-length']).toBe(String(Buffer.byteLength(edited)));
    expect(got.headers['transfer-encoding']).toBeUndefined();
    expect(got.headers.host).toBe(new URL(app.url).host);
    const answer = JSON.parse(r.text) as Record<string, unknown>;
    expect(answer).toMatchObject({ url: app.url, edited: true, status: 202, body: 'thanks 1' });
    expect(answer.headers).toMatchObject({ 'content-type': 'text/plain', 'x-app': 'local' });
    expect(replays).toHaveLength(1);
    expect(replays[0]).toMatchObject({ seq: 3, url: app.url, edited: true, answer: { status: 202 } });
  });

  it('edits only the body: the recorded headers go with it; edits only the headers: the recorded bytes go', async () => {
    const app = await receiver(cleanup);
    const { i } = await withDelivery();
    expect((await act(i, 'POST', 'replay', { seq: 3, url: app.url, body: '{"_id":"c1"}' })).status).toBe(200);
    expect(app.got[0]!.headers['x-custom']).toBe('recorded');
    expect(app.got[0]!.body.toString()).toBe('{"_id":"c1"}');
    expect((await act(i, 'POST', 'replay', { seq: 3, url: app.url, headers: { 'content-type': 'application/json' } })).status).toBe(200);
    expect(app.got[1]!.body.toString()).toBe(BODY);
    expect(app.got[1]!.headers['x-custom']).toBeUndefined();
    expect(app.got[1]!.headers['x-signingkey']).toBe(KEY);
    // Nothing edited: edited false.
    expect(JSON.parse((await act(i, 'POST', 'replay', { seq: 3, url: app.url })).text)).toMatchObject({ edited: false });
  });

  it('never takes x-signingKey from the request: a value other than the *** shown is refused, *** or none sends the key', async () => {
    const app = await receiver(cleanup);
    const { i, replays } = await withDelivery();
    for (const name of ['x-signingKey', 'X-SIGNINGKEY']) {
      const r = await act(i, 'POST', 'replay', { seq: 3, url: app.url, headers: { [name]: 'sk-typed-by-someone' } });
      expect(r.status, name).toBe(400);
      expect(JSON.parse(r.text).error).toMatch(/x-signingKey is always the listener's signing key/);
    }
    expect(app.got).toHaveLength(0);
    expect(replays).toHaveLength(0);
    expect((await act(i, 'POST', 'replay', { seq: 3, url: app.url, headers: { 'x-signingKey': '***' } })).status).toBe(200);
    expect((await act(i, 'POST', 'replay', { seq: 3, url: app.url, headers: { 'x-other': '1' } })).status).toBe(200);
    expect(app.got.map((g) => g.headers['x-signingkey'])).toEqual([KEY, KEY]);
    // Sent once, whatever the letter case given.
    expect(app.got[0]!.rawHeaders.filter((h) => h.toLowerCase() === 'x-signingkey')).toHaveLength(1);
  });

  it('refuses a body that is not JSON when its content type says JSON, naming where; any other type sends it as is', async () => {
    const app = await receiver(cleanup);
    const { i } = await withDelivery();
    const bad = await act(i, 'POST', 'replay', { seq: 3, url: app.url, body: '{"_id":"c1",\n "Status": Done}' });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).error).toBe('the body is not JSON, as its content-type says: it stops being JSON at line 2, column 12: at "Done}"');
    const typed = await act(i, 'POST', 'replay', { seq: 3, url: app.url, headers: { 'Content-Type': 'application/vnd.x+json; charset=utf-8' }, body: '{"a": "é",' });
    expect(typed.status).toBe(400);
    expect(JSON.parse(typed.text).error).toMatch(/at line 1, column 11: it ends there$/);
    expect(app.got).toHaveLength(0);
    expect((await act(i, 'POST', 'replay', { seq: 3, url: app.url, headers: { 'Content-Type': 'text/plain' }, body: 'not json <script>' })).status).toBe(200);
    expect(app.got[0]!.body.toString()).toBe('not json <script>');
  });

  it('refuses headers it cannot send: a bad name, a line break in a value, a name twice, a value that is not text', async () => {
    const app = await receiver(cleanup);
    const { i } = await withDelivery();
    const cases: Array<[unknown, RegExp]> = [
      [{ 'bad name': 'x' }, /header "bad name" is not a valid header name/],
      [{ 'x-a': 'one\r\nx-injected: 1' }, /header "x-a" has a line break or a control character/],
      [{ 'x-a': 'nul\u0000' }, /control character/],
      [{ 'X-A': '1', 'x-a': '2' }, /header "x-a" is given twice/],
      [{ 'x-a': 1 }, /header "x-a" must have a string value/],
      [['x-a', '1'], /"headers" must be an object/],
    ];
    for (const [headers, message] of cases) {
      const r = await act(i, 'POST', 'replay', { seq: 3, url: app.url, headers });
      expect(r.status, JSON.stringify(headers)).toBe(400);
      expect(JSON.parse(r.text).error).toMatch(message);
    }
    const body = await act(i, 'POST', 'replay', { seq: 3, url: app.url, body: { not: 'text' } });
    expect([body.status, JSON.parse(body.text).error]).toEqual([400, expect.stringMatching(/"body" must be a string/)]);
    expect(app.got).toHaveLength(0);
  });

  it('answers with the app\'s headers and the start of its body, secrets redacted, hostile text kept as text', async () => {
    const token = 'board-token-0123456789';
    const app = await receiver(cleanup, () => `<script>alert(1)</script>\u0007 ${token} ${'x'.repeat(5000)}`);
    const { i } = await withDelivery({ secrets: [KEY, token] });
    const r = await act(i, 'POST', 'replay', { seq: 3, url: app.url });
    const answer = JSON.parse(r.text) as { body: string; bodyTruncated?: boolean; headers: Record<string, string> };
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.body.startsWith('<script>alert(1)</script>\u0007 *** xxx')).toBe(true);
    expect(answer.body).toHaveLength(4096);
    expect(answer.bodyTruncated).toBe(true);
    expect(r.text).not.toContain(token);
  });

  it('replays through the JSON API: POST api/deliveries/<seq>/replay, with the same checks and answer', async () => {
    const app = await receiver(cleanup);
    const { i, replays } = await withDelivery({ forwardTo: undefined });
    const r = await act(i, 'POST', 'api/deliveries/3/replay', { url: app.url, body: '{"_id":"c1","Status":"Done"}' });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text)).toMatchObject({ url: app.url, edited: true, status: 202 });
    expect(app.got[0]!.body.toString()).toBe('{"_id":"c1","Status":"Done"}');
    // An empty body is a replay as recorded; with nowhere to send it, 409.
    expect((await raw(i.port, 'POST', `/${i.token}/api/deliveries/3/replay`, { 'content-type': 'application/json', 'x-cardboard-token': i.token })).status).toBe(409);
    expect((await act(i, 'POST', 'api/deliveries/4/replay', { url: app.url })).status).toBe(404);
    expect((await act(i, 'POST', 'api/deliveries/3/replay', { url: app.url, headers: { 'x-signingKey': 'mine' } })).status).toBe(400);
    expect((await act(i, 'POST', 'api/deliveries/3/replay', { url: app.url }, { 'x-cardboard-token': 'wrong' })).status).toBe(403);
    expect((await act(i, 'POST', 'api/deliveries/3/replay', { url: app.url }, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await act(i, 'POST', 'api/deliveries/3/replay', { url: app.url }, { 'content-type': 'text/plain' })).status).toBe(415);
    const get = await act(i, 'GET', 'api/deliveries/3/replay');
    expect([get.status, get.headers.allow]).toEqual([405, 'POST']);
    expect(replays.map((e) => e.edited)).toEqual([true]);
  });
});

describe('where a body stops being JSON', () => {
  it('is the byte that cannot come there, or the start of the string or number that is not one; -1 for JSON', () => {
    const cases: Array<[string, number]> = [
      ['{"a":1}', -1],
      [' [1, "x", {"b": null}] ', -1],
      ['{"a":1', 6],
      ['{"a" 1}', 5],
      ['{"a":tru}', 5],
      ['{"a":"x\ny"}', 5],
      ['[1,]', 3],
      ['[1 2]', 3],
      ['{"a":1} x', 8],
      ['{a:1}', 1],
      ['[01]', 1],
      ['', 0],
    ];
    for (const [text, offset] of cases) expect(jsonErrorOffset(Buffer.from(text)), JSON.stringify(text)).toBe(offset);
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(), fc.string({ maxLength: 2 }), (value, at, insert) => {
        const text = JSON.stringify(value);
        const cut = at % (text.length + 1);
        const mutated = text.slice(0, cut) + insert + text.slice(cut + (insert === '' ? 1 : 0));
        let parses = true;
        try {
          JSON.parse(mutated);
        } catch {
          parses = false;
        }
        const offset = jsonErrorOffset(Buffer.from(mutated));
        if (parses) expect(offset).toBe(-1);
        else expect(offset).toBeGreaterThanOrEqual(0);
        expect(offset).toBeLessThanOrEqual(Buffer.byteLength(mutated));
      }),
      { numRuns: 300 },
    );
  });
});
