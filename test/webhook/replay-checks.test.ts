import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runMain, tempDir } from '../helpers/cli.js';
import { toRecordLine } from '../../src/webhook/delivery.js';
import { sniffRecordFile } from '../../src/webhook/record-file.js';
import { TestApp } from './helpers.js';

const KEY = 'sk-replay-checks';
let app = new TestApp();
afterEach(async () => {
  await app.down();
});

async function receiver(): Promise<TestApp> {
  app = new TestApp();
  await app.up();
  return app;
}

/** A record file of these bodies, written as `webhook listen --record` writes it. */
function recordFile(bodies: string[], extra: (lines: string[]) => string[] = (l) => l): string {
  const path = join(tempDir(), 'hooks.jsonl');
  const lines = bodies.map((b, i) => toRecordLine({ seq: i + 1, receivedAt: '2026-11-25T08:00:00.000Z', method: 'POST', path: '/', headers: { 'content-type': 'application/json' }, body: Buffer.from(b) }));
  writeFileSync(path, extra(lines).join(''));
  return path;
}

const replay = (args: string[]) => runMain(['webhook', 'replay', ...args], { env: { CARDBOARD_SIGNING_KEY: KEY } });

describe('webhook replay --filter is checked against the recorded fields', () => {
  it('a field no delivery has exits 2 with the nearest recorded field, and sends nothing', async () => {
    const to = (await receiver()).url;
    const file = recordFile(['{"_id":"a","Status":"Open"}', '{"_id":"b","Status":"Done","Owner":"ana"}']);
    const r = await replay([file, '--to', to, '--filter', 'status=Open']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown field 'status' (did you mean 'Status'?)");
    expect(r.stderr).toContain('Recorded fields: _id, Status, Owner');
    expect(r.stdout).toBe('');
    expect(app.received).toHaveLength(0);
    // The right name replays what matches; a value that matches nothing is no error (0 replayed, exit 0).
    const ok = await replay([file, '--to', to, '--filter', 'Status=Open']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).toContain('replayed 1: 1 answered 200');
    const none = await replay([file, '--to', to, '--filter', 'Status=Closed']);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stderr).toContain('replayed 0');
    // Object.prototype's names are not fields.
    expect((await replay([file, '--to', to, '--filter', 'constructor=x'])).code).toBe(2);
  });

  it('--from N --filter: the field is checked against the whole file, so a field only earlier deliveries have is known (0 replayed, exit 0)', async () => {
    const to = (await receiver()).url;
    const file = recordFile(['{"_id":"a","Status":"Open"}', '{"_id":"b","Status":"Done"}', '{"_id":"c","Owner":"ana"}', '{"_id":"d","Owner":"bo"}']);
    // The built binary, as a user runs it: #3 and #4 have no Status, #1 and #2 do.
    const none = await runMain(['webhook', 'replay', file, '--to', to, '--from', '3', '--filter', 'Status=Open'], { env: { CARDBOARD_SIGNING_KEY: KEY }, spawn: true });
    expect(none.code, none.stderr).toBe(0);
    expect(none.stderr).toContain('replayed 0: 0 answered 200, 0 failed');
    expect(none.stderr).not.toContain('unknown field');
    expect(app.received).toHaveLength(0);
    // A field no delivery of the file has is still refused, naming the fields of the whole file.
    const typo = await replay([file, '--to', to, '--from', '3', '--filter', 'Stat=Open']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain(`unknown field 'Stat' (did you mean 'Status'?) in the deliveries of ${file}`);
    expect(typo.stderr).toContain('Recorded fields: _id, Status, Owner');
    // And what it matches from --from on is sent: #2 is Done, #1 (before --from) is not sent.
    const done = await replay([file, '--to', to, '--from', '2', '--filter', 'Status=Done']);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toContain('replayed 1: 1 answered 200');
    expect(app.received.map((r) => JSON.parse(r.body.toString())._id)).toEqual(['b']);
  });

  it('deliveries with no card at all: --filter exits 2 saying there is no field to match; an empty range is no error', async () => {
    const to = (await receiver()).url;
    const file = recordFile(['plain text', '[1,2,3]']);
    const r = await replay([file, '--to', to, '--filter', 'Status=Open']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is a card (a JSON object body), so no field can match');
    const past = await replay([file, '--to', to, '--filter', 'Status=Open', '--from', '9']);
    expect(past.code, past.stderr).toBe(0);
    expect(app.received).toHaveLength(0);
  });
});

describe('webhook replay refuses a file that is not a record file (`replay big.csv` exits 2)', () => {
  it('a CSV or foreign JSON Lines exits 2 naming the file and what a record file is', async () => {
    const to = (await receiver()).url;
    const csv = join(tempDir(), 'big.csv');
    writeFileSync(csv, 'Name,Status\nFix login,Open\n');
    const r = await replay([csv, '--to', to]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${csv} is not a record file`);
    expect(r.stderr).toContain('cardboard webhook listen --record');
    const foreign = join(tempDir(), 'other.jsonl');
    writeFileSync(foreign, '{"id":1}\n');
    expect((await replay([foreign, '--to', to])).code).toBe(2);
    expect((await replay([tempDir(), '--to', to])).stderr).toContain('is not a file');
    expect((await replay([join(tempDir(), 'missing.jsonl'), '--to', to])).code).toBe(2);
    expect(app.received).toHaveLength(0);
  });

  it('an empty file is an empty recording (exit 0); lines that are not deliveries are skipped and named', async () => {
    const to = (await receiver()).url;
    const empty = join(tempDir(), 'empty.jsonl');
    writeFileSync(empty, '\n\n');
    const e = await replay([empty, '--to', to]);
    expect(e.code, e.stderr).toBe(0);
    expect(e.stderr).toContain('holds no deliveries yet');
    // A crash cut line 2 short (the listener ends it with a newline on restart); line 4 is junk.
    const file = recordFile(['{"_id":"a"}', '{"_id":"b"}', '{"_id":"c"}'], (l) => [l[0]!, l[1]!.slice(0, 30) + '\n', l[2]!, '\n', 'junk\n']);
    const r = await replay([file, '--to', to]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^#1 .*\n#3 /);
    expect(r.stderr).toContain('skipped 2 lines of');
    expect(r.stderr).toContain('(line 2, 5)');
  });

  it('sniffs only the start of a file', () => {
    const big = join(tempDir(), 'blank.txt');
    writeFileSync(big, ' '.repeat(200_000));
    expect(sniffRecordFile(big)).toBe('other');
    writeFileSync(big, '\n  \n{"seq":12,"receivedAt":"x"}\n');
    expect(sniffRecordFile(big)).toBe('record');
  });
});

describe('the hint when there is no signing key names the command that stores one', () => {
  it('send, replay and listen name `cardboard board set-signing-key` with CARDBOARD_SIGNING_KEY and --signing-key-stdin', async () => {
    const to = (await receiver()).url;
    const runs = [
      ['webhook', 'send', '--to', to],
      ['webhook', 'replay', recordFile(['{"_id":"a"}']), '--to', to],
      ['webhook', 'listen', '--port', '0'],
    ];
    for (const args of runs) {
      const r = await runMain(args);
      expect(r.code, args[1]).toBe(4);
      expect(r.stderr).toContain('store it with `cardboard board set-signing-key <alias>`, or pass it with CARDBOARD_SIGNING_KEY or --signing-key-stdin');
    }
    expect(app.received).toHaveLength(0);
  });

  it('with a stored board selected, the hint names its alias', async () => {
    const configDir = tempDir();
    const add = await runMain(['board', 'add', 'work', '--url', 'http://127.0.0.1:9/api/aptlet/b1', '--token-stdin', '--no-verify'], { configDir, input: 'tok-work\n' });
    expect(add.code, add.stderr).toBe(0);
    const r = await runMain(['webhook', 'listen', '--port', '0'], { configDir });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('`cardboard board set-signing-key work`');
  });
});
