// Whatever a sender or the forward target writes, `webhook listen` prints one line per event
// with no control character, bidi override or line break raw (ids, field names, values, paths, answers).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { runWebhookListen } from '../../src/commands/webhook/listen.js';
import { deliveryLine, forwardLine, rejectLine } from '../../src/commands/webhook/render.js';
import type { SignalSource, StopSignal } from '../../src/interrupt.js';
import { Secrets } from '../../src/redact.js';
import type { Delivery } from '../../src/webhook/delivery.js';
import { cursorPath } from '../../src/webhook/forwarder.js';
import { HOSTILE } from '../helpers/hostile-server.js';
import { waitFor } from '../helpers/wait.js';
import { testContext } from '../io/buffers.js';

/** Anything a terminal would act on: C0 (LF included), DEL, C1, the separators, bidi and other format characters but ZWJ. */
const RAW = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|(?!\u200d)\p{Cf}/u;

const hostileCard = {
  _id: `id${HOSTILE.retitle}`,
  [`Title${HOSTILE.retitle}`]: HOSTILE.erase,
  [HOSTILE.rtl]: HOSTILE.cr,
  [HOSTILE.lf]: HOSTILE.c1,
};

const delivery = (body: string, path = '/'): Delivery => ({ seq: 1, receivedAt: '2026-01-02T03:04:05.678Z', method: 'POST', path, headers: {}, body: Buffer.from(body) });

describe('webhook lines are terminal-safe', () => {
  it('a delivery line escapes ids, names and values, and stays one line', () => {
    const line = deliveryLine(delivery(JSON.stringify(hostileCard), `/x${HOSTILE.rtl}`));
    expect(line).not.toMatch(RAW);
    expect(line).toContain('card id\\e]0;pwned\\a');
    expect(line).toContain('Title\\e]0;pwned\\a=\\e[1A\\e[2K');
    expect(line).toContain('evil\\u202etxt.exe=safe\\roverwritten');
    expect(line).toContain('/xevil\\u202etxt.exe');
    const text = deliveryLine(delivery(`plain ${HOSTILE.c1} ${HOSTILE.rtl}`));
    expect(text).not.toMatch(RAW);
  });
  it("a forward retry line escapes the target's answer", () => {
    const answer = { status: 503, ms: 2, body: Buffer.from(`${HOSTILE.retitle}busy${HOSTILE.erase}${HOSTILE.rtl}`) };
    const line = forwardLine({ type: 'forward', seq: 1, url: 'http://127.0.0.1:3000/', attempt: 1, answer, ok: false, retryInMs: 100, pending: 1 });
    expect(line).not.toMatch(RAW);
    expect(line).toContain('\\e]0;pwned\\abusy\\e[1A\\e[2Kevil\\u202etxt.exe');
    const failed = { ms: 1, body: Buffer.alloc(0), error: `weird${HOSTILE.cr}` };
    expect(forwardLine({ type: 'forward', seq: 1, url: 'http://127.0.0.1:3000/', attempt: 2, answer: failed, ok: false, retryInMs: 100, pending: 1 })).not.toMatch(RAW);
  });
  it('a refused request line escapes the method and path it names', () => {
    const line = rejectLine({ type: 'rejected', status: 404, method: 'POST', path: `/a${HOSTILE.erase}\n`, reason: 'not the listening path', total: 1 });
    expect(line).not.toMatch(RAW);
    expect(line).toContain('/a\\e[1A\\e[2K\\n');
  });
});

describe('webhook listen on a terminal (in process)', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  it('prints a hostile delivery and the retry of a hostile answer as single escaped lines', async () => {
    // The forward target answers 503 with escape sequences, a CR and a line break in its body.
    const target = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(503, { 'content-type': 'text/plain' }).end(`${HOSTILE.retitle}down${HOSTILE.cr}\n${HOSTILE.rtl}`));
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => target.close(() => r())));
    const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/hook`;

    let fire: (s: StopSignal) => void = () => {};
    const signals: SignalSource = {
      listen: (l) => {
        fire = l;
        return () => {};
      },
      exitNow: (signal) => {
        throw new Error(`exitNow(${signal})`);
      },
    };
    const { ctx, stdout, stderr } = testContext({ tty: true, signals });
    const run = runWebhookListen(ctx, { port: 0, host: '127.0.0.1', path: '/', signingKeyStdin: false, forwardTo: targetUrl, forwardTimeout: { ms: 2000, text: '2s' }, json: false, maxBody: 1 << 20, verify: false, maxConnections: 128 }, new Secrets());
    await waitFor(() => /Listening on (\S+) /.test(stderr.text), { what: 'the Listening line' });
    const url = /Listening on (\S+) /.exec(stderr.text)![1]!;
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(hostileCard) });
    expect(res.status).toBe(200);
    await waitFor(() => stdout.text.includes('retry in'), { what: 'a forward to be retried' });
    fire('SIGINT');
    await run;
    const spool = /kept in (\S+)\./.exec(stderr.text)?.[1];
    if (spool) {
      cleanups.push(() => {
        rmSync(spool, { force: true });
        rmSync(cursorPath(spool), { force: true });
      });
    }

    // On a terminal the outage is one line redrawn in place: cardboard's own erase-line code is the
    // only control sequence allowed; each redraw starts a line of the screen here.
    const ERASE = '\r\u001b[2K';
    expect(stdout.text).toContain(`${ERASE}forward down: 503 · for 0s, 1 try, 1 delivery waiting; retrying · `);
    const screen = stdout.text.replaceAll(ERASE, '\n').replace(/\n+/g, '\n').trim();
    const lines = screen.split('\n');
    const deliveryLines = lines.filter((l) => l.includes('#1  POST'));
    expect(deliveryLines).toHaveLength(1);
    expect(deliveryLines[0]).toContain('card id\\e]0;pwned\\a  new card  Title\\e]0;pwned\\a=\\e[1A\\e[2K  evil\\u202etxt.exe=safe\\roverwritten');
    const retry = lines.find((l) => l.includes('retry in'))!;
    expect(retry).toContain('503 Service Unavailable');
    expect(retry).toContain('\\e]0;pwned\\adownsafe overwritten evil\\u202etxt.exe');
    // Each line is either a delivery or a forward try: a line break in the data split none.
    for (const l of lines) expect(l).toMatch(/#1 {2}POST|↳ #1 forward|^forward down: 503 · for/);
    expect(screen).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(stderr.text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
  });
});
