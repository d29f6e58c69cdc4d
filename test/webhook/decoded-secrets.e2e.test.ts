// A delivery whose JSON body spells the signing key with an escape (`whsk\u002d…` for `whsk-…`) holds no
// copy of the key in its bytes, but decodes to it. `webhook listen --json` and the inspector's JSON API show
// deliveries decoded, so the key is redacted after decoding too; the record file keeps the bytes as sent
// (scrubbed only where the bytes held the key literally). The spawned CLI over real HTTP.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { post, type RunningListener, startListener } from './helpers.js';

const KEY = 'whsk-escaped-secret-0123';
const ESCAPED = 'whsk\\u002descaped-secret-0123';
let listener: RunningListener | undefined;
afterEach(async () => {
  if (listener && listener.child.exitCode === null) await listener.stop('SIGKILL');
  listener = undefined;
});

async function getJson(url: string): Promise<unknown> {
  const res = await request(url);
  expect(res.statusCode).toBe(200);
  return res.body.json();
}

describe('a signing key spelled with JSON escapes', () => {
  it('appears nowhere decoded on stdout (--json) nor in the inspector API; the record file holds the bytes as sent', async () => {
    const record = join(tempDir(), 'r.jsonl');
    listener = await startListener(['--json', '--record', record, '--inspect', '0'], { env: { CARDBOARD_SIGNING_KEY: KEY } });
    await listener.waitFor(/Inspector: (\S+)/);
    const page = /Inspector: (\S+)/.exec(listener.stderr())![1]!;
    // The key as a value, as a key, and inside a wrapped event; then a card change that would show it.
    const escaped = `{"_id":"c1","Note":"${ESCAPED}","${ESCAPED}":"as a key","Status":"Open"}`;
    const wrapped = `{"event":"comment.created","data":{"cardId":"c1","content":"key ${ESCAPED}","userName":"u"}}`;
    const change = `{"_id":"c1","Note":"now ${ESCAPED} here","Status":"Done"}`;
    const literal = `{"_id":"c2","Note":"${KEY}"}`;
    const sent = [escaped, wrapped, change, literal];
    for (const body of sent) expect(await post(listener.url, body, KEY)).toBe(200);
    await listener.waitFor(/"c2"/, 'stdout');

    // The inspector: the list's entries (previews, changes) and each delivery's detail.
    const events = await request(`${page}events`);
    let stream = '';
    for await (const chunk of events.body) {
      stream += (chunk as Buffer).toString('utf8');
      if (/event: ready\n/.test(stream)) break;
    }
    events.body.destroy();
    expect(stream).toContain('"seq":4');
    const details = [];
    for (let seq = 1; seq <= 4; seq++) details.push(await getJson(`${page}deliveries/${seq}`));

    const r = await listener.stop('SIGTERM');
    expect(r.signal, r.stderr).toBe('SIGTERM');
    const printed = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(printed).toHaveLength(4);
    // Decoded and written again by JSON.stringify, the key would show as itself: it must not, anywhere.
    for (const shown of [JSON.stringify(printed), JSON.stringify(details), JSON.stringify(stream), r.stdout, stream, r.stderr]) {
      expect(shown).not.toContain(KEY);
      expect(shown).not.toContain('escaped-secret-0123');
    }
    expect(printed[0]!.body).toEqual({ _id: 'c1', Note: '***', '***': 'as a key', Status: 'Open' });
    expect(printed[2]!.changes).toEqual([{ field: 'Note', before: '***', after: 'now *** here' }, { field: 'Status', before: 'Open', after: 'Done' }]);
    expect((details[1] as { change: { comment: { content: string } } }).change.comment.content).toBe('key ***');

    // The record file: the bytes as sent; only the literal key was scrubbed from the bytes.
    const recorded = readFileSync(record, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { bodyBase64: string });
    const bytes = recorded.map((l) => Buffer.from(l.bodyBase64, 'base64').toString('utf8'));
    expect(bytes).toEqual([escaped, wrapped, change, '{"_id":"c2","Note":"***"}']);
  });
});
