// `webhook replay --set`: each replayed card sent with fields set, over real HTTP to a receiver; the record
// file itself never changes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runMain, tempDir } from '../helpers/cli.js';
import { editedBody } from '../../src/webhook/replay.js';
import { keyedListener, post, type RunningListener, type TestApp, upApp } from './helpers.js';

const K1 = 'sk-recorder-1';
const K2 = 'sk-receiver-2';
let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

const listen = (key: string, args: string[]): Promise<RunningListener> => keyedListener(args, key, cleanup);

/** A record file of these bodies, as `webhook listen --record` writes it. */
async function recording(bodies: string[]): Promise<string> {
  const path = join(tempDir(), 'rec.jsonl');
  const l = await listen(K1, ['--record', path]);
  for (const body of bodies) expect(await post(l.url, body, K1, { 'x-custom': 'kept' })).toBe(200);
  expect((await l.stop()).signal).toBe('SIGTERM');
  return path;
}

const app = (): Promise<TestApp> => upApp(cleanup);

// The built binary: what a user runs.
const replay = (args: string[]) => runMain(['webhook', 'replay', ...args], { env: { CARDBOARD_SIGNING_KEY: K2 }, spawn: true });

describe('webhook replay --set', () => {
  it('sends each card with the fields set, the key header as replay sets it, and leaves the record file as it was', async () => {
    const file = await recording(['{"_id":"a","Name":"One","Status":"Open"}', '{ "_id": "b", "Name": "Two", "Status": "Open", "N": 1.5 }']);
    const before = readFileSync(file);
    const receiver = await app();
    const r = await replay([file, '--to', receiver.url, '--set', 'Status=Done', '--set', 'Name:={"first":"Ada"}']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('replayed 2: 2 answered 200, 0 failed');
    expect(receiver.received.map((q) => JSON.parse(q.body.toString('utf8')))).toEqual([
      { _id: 'a', Name: { first: 'Ada' }, Status: 'Done' },
      { _id: 'b', Name: { first: 'Ada' }, Status: 'Done', N: 1.5 },
    ]);
    // Re-serialised JSON, its length the edited body's; the recorded headers but the key, which is the one in use.
    expect(receiver.received[0]!.body.toString('utf8')).toBe('{"_id":"a","Name":{"first":"Ada"},"Status":"Done"}');
    for (const q of receiver.received) {
      expect(q.headers['x-signingkey']).toBe(K2);
      expect(q.headers['x-custom']).toBe('kept');
      expect(q.headers['content-type']).toBe('application/json');
      expect(Number(q.headers['content-length'])).toBe(q.body.length);
    }
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(r.stdout + r.stderr).not.toContain(K2);
  });

  it('a field the card lacks exits 2 naming it with the nearest field, before anything is sent; --allow-unknown adds it', async () => {
    const file = await recording(['{"_id":"a","Name":"One","Status":"Open"}', '{"_id":"b","Name":"Two"}']);
    const receiver = await app();
    const typo = await replay([file, '--to', receiver.url, '--set', 'Stauts=Done']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("--set: unknown field 'Stauts' (did you mean 'Status'?) in the card of #1");
    // #1 has Status, #2 does not: the whole run is checked first, so not even #1 went out.
    const lacking = await replay([file, '--to', receiver.url, '--set', 'Status=Done']);
    expect(lacking.code).toBe(2);
    expect(lacking.stderr).toContain("--set: unknown field 'Status' in the card of #2");
    expect(lacking.stderr).toContain('--allow-unknown adds a field the card lacks');
    expect(receiver.received).toHaveLength(0);
    const added = await replay([file, '--to', receiver.url, '--set', 'Status=Done', '--allow-unknown']);
    expect(added.code, added.stderr).toBe(0);
    expect(receiver.received.map((q) => q.body.toString('utf8'))).toEqual(['{"_id":"a","Name":"One","Status":"Done"}', '{"_id":"b","Name":"Two","Status":"Done"}']);
  });

  it('a body that is not a card JSON object is not sent and named; the others are (exit 1)', async () => {
    const file = await recording(['{"_id":"a","Status":"Open"}', 'just text', '[1,2]', '{"_id":"c","Status":"Open"}']);
    const receiver = await app();
    const r = await replay([file, '--to', receiver.url, '--set', 'Status=Done']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^#2 {2}not sent: its body is not a card \(a JSON object\) for --set to change$/m);
    expect(r.stderr).toContain('replayed 2: 2 answered 200, 0 failed; 2 deliveries not sent (#2, #3): not a card (a JSON object) for --set to change');
    expect(receiver.received.map((q) => q.body.toString('utf8'))).toEqual(['{"_id":"a","Status":"Done"}', '{"_id":"c","Status":"Done"}']);
    const json = await replay([file, '--to', receiver.url, '--set', 'Status=Done', '--from', '2', '--json']);
    expect(JSON.parse(json.stdout.split('\n')[0]!)).toMatchObject({ seq: 2, status: null, error: 'not sent: its body is not a card (a JSON object) for --set to change' });
  });

  it('bad --set values exit 2 with the pair named', async () => {
    const file = await recording(['{"_id":"a","Status":"Open"}']);
    for (const [args, message] of [
      [['--set', 'Status'], "--set: expected Field=value or Field:=<json>, got 'Status'"],
      [['--set', 'N:={'], "--set: field 'N': the value after := is not valid JSON"],
      [['--allow-unknown'], '--allow-unknown needs --set'],
    ] as const) {
      const r = await replay([file, '--to', 'http://127.0.0.1:9/hooks', ...args]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(message);
    }
  });

  it('never sends a number other than written: a := number JSON cannot keep exits 2, a card holding one exits 1, nothing sent', async () => {
    const file = await recording(['{"_id":"a","Name":"One","N":1.10}', '{"_id":"b","Name":"Two","N":2,"Ref":12345678901234567890123}']);
    const receiver = await app();
    for (const value of ['123456789012345678901234567890', '1e999', '[1,{"x":"99999999999999999999"},99999999999999999999]']) {
      const r = await replay([file, '--to', receiver.url, '--set', `N:=${value}`]);
      expect(r.code, value).toBe(2);
      expect(r.stderr).toMatch(/^error: --set N: \S+ cannot be sent exactly as a JSON number$/m);
    }
    const r = await replay([file, '--to', receiver.url, '--set', 'Name=x']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error: --set: the card of #2 has a number that a JSON parse cannot keep (12345678901234567890123): edited, it would be sent changed');
    expect(receiver.received).toHaveLength(0);
    // Numbers JSON keeps go, written as JSON writes them; a string of digits is a string.
    const ok = await replay([file, '--to', receiver.url, '--filter', '_id=a', '--set', 'N:=1e2', '--set', 'Name=12345678901234567890123']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(receiver.received.map((q) => q.body.toString('utf8'))).toEqual(['{"_id":"a","Name":"12345678901234567890123","N":100}']);
  });

  it('editedBody sets a field named __proto__ as a key of the card, not its prototype', () => {
    const set = Object.create(null) as Record<string, unknown>;
    set.__proto__ = 'x';
    expect(editedBody(Buffer.from('{"__proto__":"a","Name":"n"}'), set)?.toString()).toBe('{"__proto__":"x","Name":"n"}');
    expect(editedBody(Buffer.from('"text"'), set)).toBeUndefined();
  });
});
