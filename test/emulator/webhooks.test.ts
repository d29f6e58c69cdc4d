import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { BOARD_ID, type RunningEmulator, SIGNING_KEY, startTestEmulator, TEST_BOARDS, TOKEN } from '../helpers/emulator.js';
import { call } from './http.js';
import { waitFor } from '../helpers/wait.js';
import { simClock } from '../helpers/sim.js';
import { DEFAULT_RETRY_CAP_MS, type PostHook, WebhookSender } from '../../src/emulator/webhooks.js';

interface Delivery {
  method: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

/** A local webhook receiver answering the queued statuses in turn (200 once they run out); 0 = never answer. */
async function receiver(statuses: number[]) {
  const got: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ method: req.method!, headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      const status = statuses.shift() ?? 200;
      if (status !== 0) res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
  const close = () => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  };
  return { got, url, close };
}

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function emulatorWithHook(url: string, opts: { webhookTimeoutMs?: number } = {}): Promise<RunningEmulator> {
  const boards = structuredClone(TEST_BOARDS);
  boards[BOARD_ID]!.webhookUrl = url;
  const emu = await startTestEmulator({ boards, ...opts });
  cleanup.push(() => emu.close());
  return emu;
}

const put = (emu: RunningEmulator, body: unknown) => call(emu, 'POST', `/api/aptlet/${BOARD_ID}`, { token: TOKEN, body });

describe('webhooks (spec 6)', () => {
  it('POSTs each created or updated card as JSON with x-signingKey', async () => {
    const hook = await receiver([]);
    cleanup.push(hook.close);
    const emu = await emulatorWithHook(hook.url);
    const card = (await put(emu, { Name: 'A' })).json as { _id: string };
    await put(emu, { _id: card._id, Status: 'Done' });
    await waitFor(() => hook.got.length === 2);
    expect(hook.got.map((d) => d.method)).toEqual(['POST', 'POST']);
    for (const d of hook.got) {
      expect(d.headers['x-signingkey']).toBe(SIGNING_KEY);
      expect(d.headers['content-type']).toBe('application/json');
    }
    expect(hook.got.map((d) => d.body)).toEqual([
      { _id: card._id, Name: 'A' },
      { _id: card._id, Name: 'A', Status: 'Done' },
    ]);
    await waitFor(() => emu.state()[BOARD_ID]!.webhooks.delivered === 2);
    expect(emu.state()[BOARD_ID]!.webhooks).toEqual({ pending: 0, delivered: 2, attempts: 2 });
  });

  it('retries after a non-200, keeping the board’s order', async () => {
    const hook = await receiver([500, 403]);
    cleanup.push(hook.close);
    const emu = await emulatorWithHook(hook.url);
    await put(emu, { Name: 'first' });
    await put(emu, { Name: 'second' });
    await waitFor(() => hook.got.length === 4);
    expect(hook.got.map((d) => (d.body as { Name: string }).Name)).toEqual(['first', 'first', 'first', 'second']);
    await waitFor(() => emu.state()[BOARD_ID]!.webhooks.delivered === 2);
    expect(emu.state()[BOARD_ID]!.webhooks).toEqual({ pending: 0, delivered: 2, attempts: 4 });
  });

  it('retries when the receiver does not answer in time, without slowing the API', async () => {
    const hook = await receiver([0]);
    cleanup.push(hook.close);
    const emu = await emulatorWithHook(hook.url, { webhookTimeoutMs: 100 });
    const r = await put(emu, { Name: 'A' });
    // The API answered while the first delivery still waits for the silent receiver.
    expect(r.status).toBe(200);
    expect(emu.state()[BOARD_ID]!.webhooks.delivered).toBe(0);
    await waitFor(() => emu.state()[BOARD_ID]!.webhooks.delivered === 1);
    // The silent first try, then one answered 200. On a loaded machine an answer can itself come later than
    // 100 ms and be tried again: every try reached the receiver, and the card was delivered once.
    expect(hook.got.length).toBeGreaterThanOrEqual(2);
    expect(emu.state()[BOARD_ID]!.webhooks.attempts).toBe(hook.got.length);
    expect(emu.state()[BOARD_ID]!.webhooks.pending).toBe(0);
  });

  it('stops retrying on close()', async () => {
    const hook = await receiver(Array(1000).fill(500));
    cleanup.push(hook.close);
    const emu = await emulatorWithHook(hook.url);
    await put(emu, { Name: 'A' });
    await waitFor(() => hook.got.length >= 2);
    await emu.close();
    const seen = hook.got.length;
    await new Promise((r) => setTimeout(r, 200));
    expect(hook.got.length).toBe(seen);
  });
});

describe('the redelivery backoff (simulated time)', () => {
  /** When each try of one delivery was made, in simulated ms, when the receiver fails `failures` times first. */
  async function tryTimes(failures: number, retryCapMs?: number): Promise<number[]> {
    const clock = simClock();
    const times: number[] = [];
    let delivered!: () => void;
    const done = new Promise<void>((resolve) => (delivered = resolve));
    const post: PostHook = async () => {
      times.push(clock.now());
      if (times.length <= failures) return 0;
      delivered();
      return 200;
    };
    const sender = new WebhookSender(() => ({ url: 'http://127.0.0.1:9/hook', signingKey: 'k' }), { retryCapMs, timers: clock, post });
    sender.enqueue('b', '{"_id":"a"}');
    await clock.run(done);
    sender.close();
    return times;
  }
  const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i]!);

  it('waits 0.5 s, doubling after each failure, capped at 2 s by default, so a receiver back up is tried within 2 s', async () => {
    expect(DEFAULT_RETRY_CAP_MS).toBe(2000);
    expect(gaps(await tryTimes(8))).toEqual([500, 1000, 2000, 2000, 2000, 2000, 2000, 2000]);
  });

  it('keeps another cap for a test that needs it', async () => {
    expect(gaps(await tryTimes(7, 30_000))).toEqual([500, 1000, 2000, 4000, 8000, 16_000, 30_000]);
    expect(gaps(await tryTimes(3, 50))).toEqual([50, 50, 50]);
  });
});

describe('webhookUrl (--webhook-url)', () => {
  it('points the first board at the URL, replacing the boards file’s, and the other boards keep theirs', async () => {
    const hook = await receiver([]);
    cleanup.push(hook.close);
    const emu = await startTestEmulator({ webhookUrl: hook.url });
    cleanup.push(() => emu.close());
    expect(Object.keys(emu.boards)[0]).toBe(BOARD_ID);
    expect(Object.values(emu.boards).map((b) => b.webhookUrl)).toEqual([hook.url, null, null]);
    await put(emu, { Name: 'A' });
    await waitFor(() => hook.got.length === 1);
    expect(hook.got[0]!.headers['x-signingkey']).toBe(SIGNING_KEY);
  });
});
