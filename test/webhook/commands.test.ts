import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it, vi } from 'vitest';
import { deliveryLine, forwardLine, LINE_PARSE_MAX_BYTES, summaryLine } from '../../src/commands/webhook/render.js';
import { formatBytes } from '../../src/units.js';
import { KEY_TRANSPORT_HELP } from '../../src/commands/webhook/key.js';
import { webhookListenCommand } from '../../src/commands/webhook/listen.js';
import { webhookReplayCommand } from '../../src/commands/webhook/replay.js';
import { matchesFilters } from '../../src/webhook/replay.js';
import { webhookSendCommand } from '../../src/commands/webhook/send.js';
import { type Context, createContext } from '../../src/context.js';
import { UsageError } from '../../src/errors.js';
import type { Delivery } from '../../src/webhook/delivery.js';
import { runMain, tempDir } from '../helpers/cli.js';

const spy = () => vi.fn(async (_ctx: Context, _opts: unknown) => {});

function parse(register: (parent: Command, run: ReturnType<typeof spy>) => void, args: string[]) {
  const run = spy();
  const program = new Command().exitOverride();
  register(program, run);
  return { run, done: program.parseAsync(args, { from: 'user' }) };
}

const ctx = createContext({ env: {} });

describe('webhook listen parsing', () => {
  it('turns flags into plain options with the documented defaults', async () => {
    const { run, done } = parse((p, r) => webhookListenCommand(p, () => ctx, r), ['listen']);
    await done;
    expect(run).toHaveBeenCalledWith(ctx, { port: 8787, host: '127.0.0.1', path: '/', signingKeyStdin: false, forwardTo: undefined, forwardTimeout: { ms: 30_000, text: '30s' }, record: undefined, json: false, maxBody: 1024 * 1024, maxConnections: 128, verify: true, mirror: false }, expect.anything());
  });

  it('reads every flag', async () => {
    const args = ['listen', '--port', '0', '--host', '0.0.0.0', '--path', '/hooks', '--signing-key-stdin', '--forward-to', 'http://localhost:3000/x', '--forward-timeout', '2m', '--record', 'r.jsonl', '--json', '--max-body', '64kb', '--max-connections', '16', '--no-verify', '--mirror'];
    const { run, done } = parse((p, r) => webhookListenCommand(p, () => ctx, r), args);
    await done;
    expect(run.mock.calls[0]![1]).toEqual({ port: 0, host: '0.0.0.0', path: '/hooks', signingKeyStdin: true, forwardTo: 'http://localhost:3000/x', forwardTimeout: { ms: 120_000, text: '2m' }, record: 'r.jsonl', json: true, maxBody: 65_536, maxConnections: 16, verify: false, mirror: true });
  });

  it('gives each filter to the --forward-to before it, and those before the first to every route, whatever the options interleave', async () => {
    const args = ['listen', '--changed', 'Owner', '--forward-to', 'http://localhost:3000/a', '--where', 'Status=Done', '--changed', 'Name', '--where', 'Priority>2', '--forward-to', 'http://localhost:3001/b', '--where', 'Owner~ann', '--where', 'Name!=x'];
    const { run, done } = parse((p, r) => webhookListenCommand(p, () => ctx, r), args);
    await done;
    expect(run.mock.calls[0]![1]).toMatchObject({
      forwardTo: undefined,
      routing: {
        global: { where: [], changed: ['Owner'] },
        routes: [
          { url: 'http://localhost:3000/a', where: ['Status=Done', 'Priority>2'], changed: ['Name'] },
          { url: 'http://localhost:3001/b', where: ['Owner~ann', 'Name!=x'], changed: [] },
        ],
      },
    });
    // The same command parsed twice: the second parse's order is its own.
    const program = new Command().exitOverride();
    const again = spy();
    webhookListenCommand(program, () => ctx, again);
    await program.parseAsync(['listen', '--forward-to', 'http://localhost:3000/a', '--where', 'A=1'], { from: 'user' });
    await program.parseAsync(['listen', '--where', 'A=1', '--forward-to', 'http://localhost:3000/a'], { from: 'user' });
    expect(again.mock.calls[0]![1]).toMatchObject({ routing: { global: { where: [] }, routes: [{ url: 'http://localhost:3000/a', where: ['A=1'] }] } });
    expect(again.mock.calls[1]![1]).toMatchObject({ routing: { global: { where: ['A=1'] }, routes: [{ url: 'http://localhost:3000/a', where: [] }] } });
  });

  it('keeps one plain --forward-to as it was: no routing', async () => {
    const { run, done } = parse((p, r) => webhookListenCommand(p, () => ctx, r), ['listen', '--forward-to', 'http://localhost:3000/a']);
    await done;
    expect(run.mock.calls[0]![1]).toMatchObject({ forwardTo: 'http://localhost:3000/a', routing: undefined });
  });

  it('refuses a bad --forward-to before running', async () => {
    const { run, done } = parse((p, r) => webhookListenCommand(p, () => ctx, r), ['listen', '--forward-to', 'localhost:3000']);
    await expect(done).rejects.toThrow(UsageError);
    expect(run).not.toHaveBeenCalled();
  });
});

describe('webhook replay and send parsing', () => {
  it('replay collects repeated --filter pairs and --from', async () => {
    const { run, done } = parse((p, r) => webhookReplayCommand(p, () => ctx, r), ['replay', 'f.jsonl', '--to', 'http://localhost/', '--from', '3', '--filter', 'Status=Done', '--filter', 'Name=a=b']);
    await done;
    expect(run.mock.calls[0]![1]).toMatchObject({ file: 'f.jsonl', to: 'http://localhost/', from: 3, filters: [['Status', 'Done'], ['Name', 'a=b']], timeout: { ms: 60_000 } });
  });

  it('replay refuses a filter without a field name', async () => {
    const { done } = parse((p, r) => webhookReplayCommand(p, () => ctx, r), ['replay', 'f.jsonl', '--to', 'http://h/', '--filter', '=x']);
    await expect(done).rejects.toThrow(/Field=value/);
  });

  it('send refuses --data with --card, and stdin twice', async () => {
    await expect(parse((p, r) => webhookSendCommand(p, () => ctx, r), ['send', '--to', 'http://h/', '--data', '{}', '--card', 'c1']).done).rejects.toThrow(UsageError);
    await expect(parse((p, r) => webhookSendCommand(p, () => ctx, r), ['send', '--to', 'http://h/', '--data', '-', '--signing-key-stdin']).done).rejects.toThrow(/both want stdin/);
  });
});

const d = (body: string): Delivery => ({ seq: 3, receivedAt: '2026-01-02T03:04:05.678Z', method: 'POST', path: '/', headers: {}, body: Buffer.from(body) });

describe('--signing-key-stdin, one flag for listen, replay and send', () => {
  const verbs = ['listen', 'replay', 'send'] as const;

  it('reads the same in each help, with the same line on where the key may travel', async () => {
    for (const verb of verbs) {
      const r = await runMain(['webhook', verb, '--help']);
      expect(r.code, verb).toBe(0);
      const text = r.stdout.replace(/\n {10,}/g, ' ');
      const line = text.split('\n').find((l) => l.startsWith('  --signing-key-stdin')) ?? '';
      expect(line, verb).toMatch(/^ {2}--signing-key-stdin +read the signing key from stdin \(else the selected board's stored key or CARDBOARD_SIGNING_KEY; `board show` says which\)$/);
      expect(text.split('\n'), verb).toContain(KEY_TRANSPORT_HELP);
    }
  });

  it('an empty stdin is a usage error whose hint names the verb that ran', async () => {
    const record = join(tempDir(), 'hooks.jsonl');
    writeFileSync(record, '{"seq":1,"receivedAt":"2026-01-01T00:00:00.000Z","headers":{},"body":"{}"}\n');
    const runs = { listen: ['--port', '0'], replay: [record, '--to', 'http://127.0.0.1:9/'], send: ['--to', 'http://127.0.0.1:9/'] };
    for (const verb of verbs) {
      const r = await runMain(['webhook', verb, ...runs[verb], '--signing-key-stdin'], { input: '' });
      expect(r.code, `${verb}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain('--signing-key-stdin: stdin was empty');
      expect(r.stderr).toContain(`hint: Pipe the key in: \`pbpaste | cardboard webhook ${verb} --signing-key-stdin …\`.`);
    }
  });
});

describe('rendering and filters', () => {
  it('shows time, seq, card _id, a new card with its first fields, and the size', () => {
    expect(deliveryLine(d('{"_id":"c1","Name":"Fix login","Status":"Open","Owner":"ana","Priority":1,"Due":"2026-12-01"}'))).toBe(
      '03:04:05.678  #3  POST /  card c1  new card  Name=Fix login  Status=Open  Owner=ana  Priority=1  +1 more  93 B',
    );
    expect(deliveryLine(d('hello'))).toBe('03:04:05.678  #3  POST /  text "hello"  5 B');
  });

  it('shows a JSON body that is not an object as the JSON it is, escaped for the terminal', () => {
    expect(deliveryLine(d('[1,2,3]'))).toBe('03:04:05.678  #3  POST /  json [1,2,3]  7 B');
    expect(deliveryLine(d('[{"a":1},"b"]'))).toContain('  json [{"a":1},"b"]  ');
    expect(deliveryLine(d('42'))).toContain('  json 42  ');
    expect(deliveryLine(d('null'))).toContain('  json null  ');
    expect(deliveryLine(d('"quoted"'))).toContain('  json "quoted"  ');
    expect(deliveryLine(d(`["${'x'.repeat(60)}"]`))).toContain(`  json ["${'x'.repeat(37)}…  `);
    // A control character inside the array never reaches the terminal raw (JSON escapes it; so does terminalText).
    expect(deliveryLine(d('["\\u001b[2J", "\u202e"]'))).not.toMatch(/[\u001b\u202e]/);
  });

  it('does not parse a body over 1 MB for a terminal line (it would hold more copies of it)', () => {
    const big = `{"_id":"c1","Name":"${'x'.repeat(LINE_PARSE_MAX_BYTES)}"}`;
    expect(deliveryLine(d(big))).toBe(`03:04:05.678  #3  POST /  body not parsed for this line (over ${formatBytes(LINE_PARSE_MAX_BYTES)}; --json shows it)  ${formatBytes(big.length)}`);
  });

  it('shows a forward with its status, time and the start of the answer, or its retry', () => {
    const answer = { status: 200, ms: 12.4, body: Buffer.from('{"ok":true}') };
    expect(forwardLine({ type: 'forward', seq: 3, url: 'http://127.0.0.1:3000/', attempt: 1, answer, ok: true, pending: 0 })).toBe('  ↳ #3 forward: 200 OK in 12 ms  {"ok":true}');
    const failed = { ms: 1, body: Buffer.alloc(0), error: 'ECONNREFUSED' };
    expect(forwardLine({ type: 'forward', seq: 3, url: 'http://127.0.0.1:3000/', attempt: 2, answer: failed, ok: false, retryInMs: 400, pending: 5 })).toBe('  ↳ #3 forward (try 2): no answer (ECONNREFUSED) after 1.0 ms  → retry in 400 ms, 5 waiting');
    expect(summaryLine({ delivered: 4, rejected: { 403: 2, 404: 0, 405: 0, 413: 1, 500: 0 } }, 1)).toBe('stopped: 4 delivered, 3 refused (403: 2, 413: 1), 1 waiting to be forwarded');
    expect(summaryLine({ delivered: 4, rejected: { 403: 0, 404: 0, 405: 0, 413: 0, 500: 1 } }, undefined, { applied: 3, unplaced: 1 })).toBe('stopped: 4 delivered, 1 refused (500: 1), 3 applied to the mirror, 1 unplaced (kept in it, no card changed)');
  });

  it('filters on exact, case-sensitive field names', () => {
    const card = d('{"_id":"c","Status":"Done","N":1}');
    expect(matchesFilters(card, [['Status', 'Done']])).toBe(true);
    expect(matchesFilters(card, [['status', 'Done']])).toBe(false);
    expect(matchesFilters(card, [['N', '1'], ['Status', 'Done']])).toBe(true);
    expect(matchesFilters(d('text'), [['Status', 'Done']])).toBe(false);
  });
});
