import { appendFileSync, chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MASK } from '../../src/redact.js';
import { type Delivery, headersFromRaw, outgoingHeaders, parseRecordLine, rawHeader, toRecordLine, viewJson, bodyValue, type DeliveryView } from '../../src/webhook/delivery.js';

/** The `--json` view of a delivery built the plain way: what viewJson's faster line must equal. */
const toView = (d: Delivery): DeliveryView => ({ seq: d.seq, receivedAt: d.receivedAt, method: d.method, path: d.path, headers: d.headers, body: bodyValue(d.body) });
import { UsageError } from '../../src/errors.js';
import { readDeliveries, RecordFile, requireRecordFile } from '../../src/webhook/record-file.js';
import { isJsonText } from '../../src/webhook/json-bytes.js';
import { parseLargeRecordLine, recordPieces } from '../../src/webhook/large-lines.js';
import { tempDir } from '../helpers/cli.js';

function delivery(seq: number, body: string | Buffer, headers: Record<string, string> = { 'content-type': 'application/json' }): Delivery {
  return { seq, receivedAt: '2026-01-02T03:04:05.678Z', method: 'POST', path: '/hooks?x=1', headers, body: Buffer.isBuffer(body) ? body : Buffer.from(body) };
}

describe('record lines', () => {
  it('round-trip any body bytes and header values exactly', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), fc.string()), fc.nat(), (bytes, headers, seq) => {
        const d = delivery(seq, Buffer.from(bytes), headers);
        const line = toRecordLine(d);
        expect(line.endsWith('\n')).toBe(true);
        expect(line.slice(0, -1)).not.toContain('\n');
        const back = parseRecordLine(line);
        expect(back.body.equals(d.body)).toBe(true);
        expect(back.headers).toEqual(d.headers);
        expect(back.seq).toBe(seq);
      }),
    );
  });

  it('hold the --json shape: body parsed when JSON, text otherwise, plus the exact bytes', () => {
    const json = JSON.parse(toRecordLine(delivery(7, '{"_id":"c1","Name":"A"}'))) as Record<string, unknown>;
    expect(Object.keys(json)).toEqual(['seq', 'receivedAt', 'method', 'path', 'headers', 'body', 'bodyBase64']);
    expect(json.body).toEqual({ _id: 'c1', Name: 'A' });
    expect(Buffer.from(json.bodyBase64 as string, 'base64').toString()).toBe('{"_id":"c1","Name":"A"}');
    expect(toView(delivery(1, 'not json')).body).toBe('not json');
    expect(() => parseRecordLine('{"seq":3,"recei')).toThrow();
  });

  it('print the --json line as one line that reads back as the same value, compact or pretty-printed', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(undefined, 2, '\t'), (value, indent) => {
        const d = delivery(1, JSON.stringify(value, null, indent));
        const line = viewJson(d);
        expect(line).not.toMatch(/[\n\r]/);
        expect(JSON.parse(line)).toEqual(JSON.parse(JSON.stringify(toView(d))));
      }),
    );
    // Copied as sent: digits a double would round survive.
    expect(viewJson(delivery(1, '{"n":12345678901234567890}'))).toContain('"body":{"n":12345678901234567890}}');
    expect(JSON.parse(viewJson(delivery(1, 'a "text"\nbody'))).body).toBe('a "text"\nbody');
  });

  it('write the --json line as JSON.stringify would, headers in their order, a JSON body copied as sent', () => {
    const plain = (d: Delivery, body: string) => `${JSON.stringify({ seq: d.seq, receivedAt: d.receivedAt, method: d.method, path: d.path, headers: d.headers }).slice(0, -1)},"body":${body}}`;
    fc.assert(
      // Any UTF-16, lone surrogates and control characters included: escaped exactly as JSON.stringify does.
      fc.property(fc.array(fc.tuple(fc.string({ unit: 'binary', minLength: 1, maxLength: 10 }), fc.string({ unit: 'binary' }))), fc.jsonValue(), fc.string({ unit: 'binary' }), (pairs, value, path) => {
        const headers = Object.assign(Object.create(null) as Record<string, string>, Object.fromEntries(pairs));
        const d = { ...delivery(9, ` ${JSON.stringify(value)}\t`, headers), path };
        expect(viewJson(d)).toBe(plain(d, JSON.stringify(value)));
      }),
    );
    // Bytes that are not UTF-8 inside a string: what JSON.parse makes of the text (U+FFFD), as before.
    const odd = delivery(1, Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff, 0xc3]), Buffer.from('"}')]), { ['__proto__']: 'p', '1': 'one' });
    expect(viewJson(odd)).toBe(plain(odd, odd.body.toString('utf8')));
    expect(JSON.parse(viewJson(odd)).body).toEqual({ a: '\ufffd\ufffd' });
  });

  it('read one raw header case-insensitively, repeats joined as req.headers joins them', () => {
    const raw = ['Host', 'x', 'X-SigningKey', 'k1', 'x-signingkey', 'k2', 'Content-Length', '3'];
    expect(rawHeader(raw, 'x-signingkey')).toBe('k1, k2');
    expect(rawHeader(raw, 'content-length')).toBe('3');
    expect(rawHeader(raw, 'accept')).toBeUndefined();
  });

  it('never carry the signing key, whatever its spelling or repetition', () => {
    const h = headersFromRaw(['Host', 'x', 'x-signingKey', 'sk-secret', 'X-SIGNINGKEY', 'sk-other', 'Accept', 'a', 'accept', 'b']);
    expect(h).toEqual({ Host: 'x', 'x-signingKey': MASK, Accept: 'a, b' });
    expect(JSON.stringify(h)).not.toContain('sk-');
  });

  it('re-send with the original headers, the key in use, and no per-connection headers', () => {
    const h = { Host: 'a:1', 'Content-Length': '3', Connection: 'keep-alive', 'x-signingKey': MASK, 'Content-Type': 'application/json', 'X-Custom': 'v' };
    expect(outgoingHeaders(h, 'sk-1')).toEqual({ 'Content-Type': 'application/json', 'X-Custom': 'v', 'x-signingKey': 'sk-1' });
    expect(outgoingHeaders(h, undefined)).toEqual({ 'Content-Type': 'application/json', 'X-Custom': 'v' });
  });
});

describe('RecordFile', () => {
  it('numbers deliveries, continues after a restart and skips a line cut short by a crash', async () => {
    const path = join(tempDir(), 'r.jsonl');
    const first = new RecordFile(path);
    const a = first.append({ receivedAt: 't', method: 'POST', path: '/', headers: {}, body: Buffer.from('one') });
    const b = first.append({ receivedAt: 't', method: 'POST', path: '/', headers: {}, body: Buffer.from('two') });
    expect([a.delivery.seq, b.delivery.seq, a.offset]).toEqual([1, 2, 0]);
    expect(b.offset).toBe(Buffer.byteLength(toRecordLine(a.delivery)));
    await first.close();
    appendFileSync(path, '{"seq":3,"receivedAt":"t","me'); // a crash in the middle of a write
    const second = new RecordFile(path);
    expect(second.lastSeq).toBe(2);
    const c = second.append({ receivedAt: 't', method: 'POST', path: '/', headers: {}, body: Buffer.from('three') });
    expect(c.delivery.seq).toBe(3);
    await second.close();
    const all = readDeliveries(path, 0, 0, 100, 1e9);
    expect(all.deliveries.map((d) => d.body.toString())).toEqual(['one', 'two', 'three']);
    expect(all.next).toBe(readFileSync(path).length);
  });

  it('appends a batch with one write, numbered in order, each offset where its line starts', async () => {
    const path = join(tempDir(), 'r.jsonl');
    const file = new RecordFile(path);
    file.append({ receivedAt: 't', method: 'POST', path: '/', headers: {}, body: Buffer.from('zero') });
    const batch = file.appendAll(['a', 'bb', '{"c":3}'].map((b) => ({ receivedAt: 't', method: 'POST', path: '/', headers: {}, body: Buffer.from(b) })));
    await file.close();
    const bytes = readFileSync(path);
    expect(batch.map((r) => r.delivery.seq)).toEqual([2, 3, 4]);
    for (const { delivery: d, offset } of batch) {
      expect(bytes.subarray(offset, offset + Buffer.byteLength(toRecordLine(d))).toString()).toBe(toRecordLine(d));
    }
    expect(readDeliveries(path, 0, 0, 10, 1e9).deliveries.map((d) => d.body.toString())).toEqual(['zero', 'a', 'bb', '{"c":3}']);
  });

  it('reads back in bounded batches after a given sequence number', () => {
    const path = join(tempDir(), 'r.jsonl');
    writeFileSync(path, [1, 2, 3, 4, 5].map((n) => toRecordLine(delivery(n, `b${n}`))).join(''));
    const batch = readDeliveries(path, 0, 1, 2, 1e9);
    expect(batch.deliveries.map((d) => d.seq)).toEqual([2, 3]);
    const rest = readDeliveries(path, batch.next, 1, 10, 1e9);
    expect(rest.deliveries.map((d) => d.seq)).toEqual([4, 5]);
    expect(readDeliveries(path, 0, 0, 10, 1).deliveries.map((d) => d.seq)).toEqual([1]);
  });

  it('uses an existing empty file, or one of blank lines, with the mode it has', async () => {
    for (const content of ['', '\n\n']) {
      const path = join(tempDir(), 'r.jsonl');
      writeFileSync(path, content);
      chmodSync(path, 0o644);
      const file = new RecordFile(path);
      file.append({ receivedAt: 't', method: 'POST', path: '/', headers: {}, body: Buffer.from('one') });
      await file.close();
      expect(readDeliveries(path, 0, 0, 10, 1e9).deliveries.map((d) => d.seq)).toEqual([1]);
      expect(statSync(path).mode & 0o777).toBe(0o644);
    }
  });

  it('refuses a file of other content (UsageError naming --record) and writes nothing to it, cut last line or not', () => {
    for (const content of ['Name,Status\na,Open\n', '{"id":1}\n{"seq":1,', 'no newline at all']) {
      const path = join(tempDir(), 'notes.txt');
      writeFileSync(path, content);
      chmodSync(path, 0o644);
      expect(() => new RecordFile(path)).toThrow(UsageError);
      expect(() => new RecordFile(path)).toThrow(`--record ${path} is not a record file`);
      expect(() => requireRecordFile(path)).toThrow(UsageError);
      expect(readFileSync(path, 'utf8')).toBe(content);
      expect(statSync(path).mode & 0o777).toBe(0o644);
    }
    expect(() => requireRecordFile(join(tempDir(), 'absent.jsonl'))).not.toThrow();
  });
});

describe('large deliveries, written in pieces', () => {
  const parses = (text: string) => {
    try {
      JSON.parse(text);
      return true;
    } catch {
      return false;
    }
  };

  it('checks JSON text exactly as JSON.parse does, without parsing it', () => {
    const cases = ['', ' ', '01', '-', '-0', '1.', '1.5e', '1e+5', '.5', '+1', '"\u0001"', '"\\x"', '"\\u12g4"', '"\\u12aF"', '[1,]', '[,1]', '{"a":1,}', '{"a" 1}', '{1:2}', 'nul', 'true false', 'true', ' [ ] ', '{}', '{"a":[{"b":null}],"c":"\\""}', '"unterminated', '[1 2]', '\ufeff{}', '[[]', '[]]', '{"a":1}}'];
    for (const text of cases) expect(isJsonText(Buffer.from(text)), JSON.stringify(text)).toBe(parses(text));
    expect(isJsonText(Buffer.from('['.repeat(200_000) + ']'.repeat(200_000)))).toBe(true);
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(undefined, 2, '\t'), fc.nat(), fc.string({ maxLength: 2 }), (value, indent, at, insert) => {
        const text = JSON.stringify(value, null, indent);
        expect(isJsonText(Buffer.from(text))).toBe(true);
        const mutated = text.slice(0, at % (text.length + 1)) + insert + text.slice((at % (text.length + 1)) + (insert === '' ? 1 : 0));
        expect(isJsonText(Buffer.from(mutated))).toBe(parses(mutated));
      }),
      { numRuns: 500 },
    );
  });

  it('give the same record line value as the one-string path: exact bytes, body parsed when JSON, one line', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v, null, '\r\n'))), fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)), fc.string().map((s) => Buffer.from(s))), (body) => {
        const d = delivery(3, body);
        const line = [...recordPieces(d)].map((p) => (typeof p === 'string' ? p : p.toString('utf8'))).join('');
        expect(line.slice(0, -1)).not.toMatch(/[\n\r]/);
        const back = JSON.parse(line) as Record<string, unknown>;
        expect(Buffer.from(back.bodyBase64 as string, 'base64').equals(body)).toBe(true);
        expect(back.body).toEqual(bodyValue(body));
        expect(back.headers).toEqual(d.headers);
      }),
      { numRuns: 300 },
    );
  });

  it('a body over 64 KiB goes through the file and back exactly, between small ones, at the offsets given', async () => {
    const path = join(tempDir(), 'big.jsonl');
    const file = new RecordFile(path);
    const big = Buffer.from(JSON.stringify({ _id: 'big', Notes: 'é'.repeat(200_000) }, null, 2));
    const batch = file.appendAll([Buffer.from('{"a":1}'), big, Buffer.from('x'.repeat(70_000))].map((body) => ({ receivedAt: 't', method: 'POST', path: '/', headers: {}, body })));
    await file.close();
    const bytes = readFileSync(path);
    for (const { delivery: d, offset } of batch) expect(bytes.subarray(offset, offset + Buffer.byteLength(toRecordLine(d))).toString()).toBe(toRecordLine(d));
    const back = readDeliveries(path, 0, 0, 10, 1e9).deliveries;
    expect(back.map((d) => d.body.length)).toEqual([7, big.length, 70_000]);
    expect(back[1]!.body.equals(big)).toBe(true);
    expect(JSON.parse(toRecordLine(back[1]!)).body).toEqual({ _id: 'big', Notes: 'é'.repeat(200_000) });
  });
});

describe('large record lines read back', () => {
  it('without a string of the line: head parsed alone (a header named body too), body from bodyBase64; another shape falls back', () => {
    const body = Buffer.from(JSON.stringify({ _id: 'x', Notes: ',"body":{"a":1},"bodyBase64":"'.repeat(5000) }));
    const d = delivery(9, body, { body: 'h,"body":1', 'x-a': 'v' });
    const line = Buffer.from(toRecordLine(d).slice(0, -1));
    const back = parseLargeRecordLine(line)!;
    expect(back.seq).toBe(9);
    expect(back.headers).toEqual({ body: 'h,"body":1', 'x-a': 'v' });
    expect(back.body.equals(body)).toBe(true);
    expect(back.path).toBe('/hooks?x=1');
    const reordered = Buffer.from(JSON.stringify({ seq: 8, bodyBase64: body.toString('base64'), method: 'POST', headers: {} }));
    expect(parseLargeRecordLine(reordered)).toBeUndefined();
    const path = join(tempDir(), 'r.jsonl');
    writeFileSync(path, `${reordered.toString()}\n${toRecordLine(d)}`);
    expect(readDeliveries(path, 0, 0, 10, 1e9).deliveries.map((x) => [x.seq, x.body.equals(body)])).toEqual([[8, true], [9, true]]);
  });
});
