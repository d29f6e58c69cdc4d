// The lines of `webhook listen` and `replay` shorten and escape through the one text module (io/text.ts,
// io/width.ts): cut between grapheme clusters, by display width, ESC spelled `\e` like every other line.
import { describe, expect, it } from 'vitest';
import { answerStartData, deliveryLine, forwardLine } from '../../src/commands/webhook/render.js';
import type { Delivery } from '../../src/webhook/delivery.js';

const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]|\\ud8[0-9a-f]{2}/;
const delivery = (body: string): Delivery => ({ seq: 1, receivedAt: '2026-01-02T03:04:05.678Z', method: 'POST', path: '/', headers: {}, body: Buffer.from(body) });
const forward = (body: string) => forwardLine({ type: 'forward', seq: 1, url: 'http://127.0.0.1:3000/', attempt: 1, answer: { status: 200, ms: 2, body: Buffer.from(body) }, ok: true, pending: 0 });

describe('webhook lines share the one shortening', () => {
  it("the start of an app's answer is cut between clusters: no half of a surrogate pair", () => {
    const line = forward(`${'a'.repeat(58)}😀😀`);
    expect(line).toContain(`  ${'a'.repeat(58)}…`);
    expect(line).not.toMatch(LONE);
    // 60 columns, not 60 UTF-16 units: CJK is two each.
    expect(forward('漢'.repeat(40))).toMatch(new RegExp(`  ${'漢'.repeat(29)}…$`));
  });
  it('a text body shows ESC as \\e, as every other line does, not as JSON\'s \\u001b', () => {
    const line = deliveryLine(delivery('plain \u001b[31mred\u001b[0m'));
    expect(line).toContain('text "plain \\e[31mred\\e[0m"');
    expect(line).not.toContain('\\u001b');
  });
  it('a card value is cut between clusters after escaping, so the escapes count', () => {
    const line = deliveryLine(delivery(JSON.stringify({ _id: 'c1', Title: `${'x'.repeat(22)}😀😀`, Notes: '\u001b'.repeat(20) })));
    expect(line).toContain(`Title=${'x'.repeat(22)}…`);
    expect(line).toContain(`Notes=${'\\e'.repeat(11)}…`);
    expect(line).not.toMatch(LONE);
  });
  it('replay --json keeps the answer\'s own characters, cut between clusters', () => {
    expect(answerStartData(Buffer.from('ok\u001b[2J\n done'))).toBe('ok\u001b[2J done');
    expect(answerStartData(Buffer.from(`${'a'.repeat(58)}😀😀`))).toBe(`${'a'.repeat(58)}…`);
  });
});
