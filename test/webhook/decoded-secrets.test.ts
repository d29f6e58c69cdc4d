// Secrets in the decoded view of a delivery: a JSON body can spell a secret with escapes that the raw-bytes
// scrub cannot see. What is shown decoded (the terminal line, --json, the inspector, the card changes) has it
// redacted; the delivery's bytes are left as they are.
import { describe, expect, it } from 'vitest';
import { deliveryLine } from '../../src/commands/webhook/render.js';
import { CardStates } from '../../src/webhook/changes.js';
import { type Delivery, mayShowSecret, shownDelivery, viewJson } from '../../src/webhook/delivery.js';
import { EntryStore } from '../../src/webhook/inspector/store.js';

const KEY = 'whsk-unit-secret-4567';
const ESC = 'whsk\\u002dunit-secret-4567';
const SECRETS = [KEY, 'x'];

function delivery(body: string, seq = 1): Delivery {
  return { seq, receivedAt: '2026-01-01T00:00:00.000Z', method: 'POST', path: '/', headers: { 'x-signingKey': '[redacted]' }, body: Buffer.from(body) };
}

describe('shownDelivery', () => {
  it('a body without backslash or secret is the same delivery, uncopied', () => {
    const d = delivery('{"_id":"c1","Name":"plain"}');
    expect(mayShowSecret(d.body, SECRETS)).toBe(false);
    expect(shownDelivery(d, SECRETS)).toBe(d);
    const escapedOnly = delivery('{"_id":"c1","Name":"a\\u002db"}');
    expect(shownDelivery(escapedOnly, SECRETS)).toBe(escapedOnly);
  });
  it('an escaped key is redacted after decoding, in values and keys; the original is untouched', () => {
    const text = `{"_id":"c1","Note":"${ESC}","${ESC}":1,"list":["a ${ESC}"]}`;
    const d = delivery(text);
    const shown = shownDelivery(d, SECRETS);
    expect(JSON.parse(shown.body.toString())).toEqual({ _id: 'c1', Note: '***', '***': 1, list: ['a ***'] });
    expect(d.body.toString()).toBe(text);
    expect(viewJson(shown)).not.toContain('unit-secret');
  });
  it('a text body holding the key literally (an older record) is scrubbed as text', () => {
    expect(shownDelivery(delivery(`not json ${KEY}`), SECRETS).body.toString()).toBe('not json ***');
  });
});

describe('the decoded views', () => {
  it('CardStates with secrets: no change, comment or name shows the key', () => {
    const states = new CardStates({ secrets: SECRETS });
    const first = states.apply(Buffer.from(`{"_id":"c1","Note":"${ESC}","${ESC}":"k"}`));
    expect(first.changes).toEqual([{ field: 'Note', after: '***' }, { field: '***', after: 'k' }]);
    expect(first.cardName).toBe('***');
    const next = states.apply(Buffer.from(`{"_id":"c1","Note":"b"}`));
    expect(next.changes).toEqual([{ field: 'Note', before: '***', after: 'b' }]);
    const comment = states.apply(Buffer.from(`{"event":"comment","data":{"cardId":"c1","content":"${ESC}","userName":"${ESC}"}}`));
    expect(comment.comment).toEqual({ content: '***', author: '***' });
    // Without secrets the decoded key shows: what the option is for.
    expect(JSON.stringify(new CardStates().apply(Buffer.from(`{"_id":"c1","Note":"${ESC}"}`)))).toContain(KEY);
  });
  it('the terminal line of a shown delivery', () => {
    const d = delivery(`{"n":1,"${ESC}":"${ESC}"}`);
    expect(deliveryLine(d)).toContain(KEY);
    expect(deliveryLine(shownDelivery(d, SECRETS))).not.toContain('unit-secret');
    const array = delivery(`["${ESC}"]`);
    expect(deliveryLine(shownDelivery(array, SECRETS))).not.toContain('unit-secret');
  });
  it('the inspector store: preview and detail redacted, the exact bytes kept for a replay', () => {
    const text = `{"_id":"c1","Note":"${ESC}"}`;
    const store = new EntryStore(true, 10, 1_000_000, SECRETS);
    const d = delivery(text);
    store.add(d, new CardStates({ secrets: SECRETS }).apply(d.body), false);
    expect(JSON.stringify([...store.views()])).not.toContain('unit-secret');
    expect(JSON.stringify(store.detail(1))).not.toContain('unit-secret');
    expect(store.detail(1)!.size).toBe(d.body.length);
    const kept = store.lookup(1);
    expect(kept.kind === 'kept' && kept.delivery.body.toString()).toBe(text);
  });
});
