// The local loop, as a developer runs it: `cardboard emulator --webhook-url` pointed at a running
// `cardboard webhook listen`, both the built binary, over real HTTP; then the listener stopped and started
// again on the same port while a card changes: the two-line recipe of docs/emulator.md, on free ports.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_BOARD_ID, DEMO_SIGNING_KEY, DEMO_TOKEN } from '../../src/emulator/boards.js';
import { tempDir } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';
import { type RunningCli, spawnCli } from '../webhook/helpers.js';

let running: RunningCli[] = [];
afterEach(async () => {
  for (const cli of running.reverse()) await cli.stop('SIGKILL');
  running = [];
});

function start(args: string[], env: Record<string, string> = {}): RunningCli {
  const cli = spawnCli(args, { env });
  running.push(cli);
  return cli;
}

/** `webhook listen` with the demo board's key, recording to `record`; resolves once it listens. */
async function listener(port: string, record: string): Promise<{ cli: RunningCli; url: string; readyAt: number }> {
  const cli = start(['webhook', 'listen', '--port', port, '--record', record], { CARDBOARD_SIGNING_KEY: DEMO_SIGNING_KEY });
  await cli.waitFor(/Listening on (\S+)/);
  return { cli, url: /Listening on (\S+)/.exec(cli.stderr())![1]!, readyAt: Date.now() };
}

/** The deliveries recorded so far: the card's Name and when the listener received it (ms since the epoch). */
function deliveries(record: string): Array<{ name: string; receivedAt: number }> {
  let text: string;
  try {
    text = readFileSync(record, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l.startsWith('{"seq":'))
    .map((l) => JSON.parse(l) as { receivedAt: string; bodyBase64: string })
    .map((d) => ({ name: (JSON.parse(Buffer.from(d.bodyBase64, 'base64').toString('utf8')) as { Name: string }).Name, receivedAt: Date.parse(d.receivedAt) }));
}

/** When the listener received the card named `name`, once it has. */
async function arrival(record: string, name: string): Promise<number> {
  await waitFor(() => deliveries(record).some((d) => d.name === name), { what: () => `the delivery of "${name}" in ${record}: ${JSON.stringify(deliveries(record))}` });
  return deliveries(record).find((d) => d.name === name)!.receivedAt;
}

describe('cardboard emulator --webhook-url with cardboard webhook listen (built binaries)', () => {
  it('delivers a card change within 2 s, and one made while the listener was down within 5 s of its restart', async () => {
    const record = join(tempDir(), 'hooks.jsonl');
    const first = await listener('0', record);
    const port = new URL(first.url).port;
    const emulator = start(['emulator', '--port', '0', '--webhook-url', first.url]);
    await emulator.waitFor(/^listening on (\S+)/m);
    const base = /^listening on (\S+)/m.exec(emulator.stderr())![1]!;
    expect(emulator.stderr()).toContain(`webhooks to ${first.url}, signed with the signing key above`);
    const put = async (name: string) => {
      const r = await fetch(`${base}/api/aptlet/${DEMO_BOARD_ID}`, { method: 'POST', headers: { 'x-token': DEMO_TOKEN, 'content-type': 'application/json' }, body: JSON.stringify({ Name: name }) });
      expect(r.status).toBe(200);
      return Date.now();
    };
    const state = async () => ((await (await fetch(`${base}/__emulator/state`)).json()) as Record<string, { webhooks: { attempts: number; delivered: number } }>)[DEMO_BOARD_ID]!.webhooks;

    // The listener's receivedAt against the end of the card put (the emulator sends the card as it answers).
    const putAt = await put('while up');
    expect((await arrival(record, 'while up')) - putAt).toBeLessThanOrEqual(2000);

    expect((await first.cli.stop('SIGTERM')).signal).toBe('SIGTERM');
    await put('while down');
    // Down for 8 s: a backoff growing without a 2 s cap (0.5, 1, 2, 4, 8 s…) would try next at 15.5 s, 7.5 s after the restart.
    await new Promise((resolve) => setTimeout(resolve, 8000));
    const triedWhileDown = (await state()).attempts;
    const second = await listener(port, record);
    expect((await arrival(record, 'while down')) - second.readyAt).toBeLessThanOrEqual(5000);
    // Tried about every 2 s while down (0, 0.5, 1.5, 3.5, 5.5, 7.5 s: 6 tries, fewer on a slow machine, 1 for the first card).
    expect(triedWhileDown).toBeGreaterThanOrEqual(5);
    await waitFor(async () => (await state()).delivered === 2);
  }, 60_000);
});
