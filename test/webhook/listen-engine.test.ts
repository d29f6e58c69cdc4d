// The listen engine in process: the events it emits and the order of its shutdown (the server stops, then
// the record or spool is closed, then the spool is removed only if nothing in it waits; the mirror's hook:
// mirror-hook.test.ts), a failed start that leaves the record file free, and the outage steps of forward tries.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock.js';
import { CardboardError, UsageError } from '../../src/errors.js';
import { childStop } from '../../src/interrupt.js';
import { cursorPath } from '../../src/webhook/forwarder.js';
import { ListenEngine, type ListenEvent, type ListenPlan } from '../../src/webhook/listen-engine.js';
import { tempDir } from '../helpers/cli.js';
import { type LocalServer, startLocalServer } from '../helpers/receiver.js';
import { post } from './helpers.js';

const KEY = 'whsec-engine-test-key-0123456789';
const DEADLINE_MS = 10_000;

/** The events of one engine, and a wait for the first that matches, with a deadline and a message. */
function recorder() {
  const events: ListenEvent[] = [];
  const waiters = new Set<() => void>();
  return {
    events,
    onEvent: (e: ListenEvent) => {
      events.push(e);
      for (const w of waiters) w();
    },
    next<T extends ListenEvent>(what: string, match: (e: ListenEvent) => e is T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const check = () => {
          const found = events.find(match);
          if (!found) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no ${what} within ${DEADLINE_MS} ms; events: ${events.map((e) => e.type).join(', ')}`));
        }, DEADLINE_MS);
        waiters.add(check);
        check();
      });
    },
  };
}

/** Resolves once a connection to `port` is refused: the listener no longer accepts. */
async function refused(port: number): Promise<void> {
  for (const deadline = Date.now() + DEADLINE_MS; Date.now() < deadline; ) {
    const accepted = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (!accepted) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`port ${port} still accepts connections after ${DEADLINE_MS} ms`);
}

function plan(over: Partial<ListenPlan>): ListenPlan {
  return { host: '127.0.0.1', port: 0, path: '/', key: KEY, secrets: [KEY], maxBody: 1 << 20, limits: {}, ...over };
}

const isForward = (e: ListenEvent): e is Extract<ListenEvent, { type: 'forward' }> => e.type === 'forward';
const isStopped = (e: ListenEvent): e is Extract<ListenEvent, { type: 'stopped' }> => e.type === 'stopped';

describe('the listen engine', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const app = async (answer: 'ok' | 'never' | ((n: number) => number)): Promise<LocalServer> => {
    let n = 0;
    const server = await startLocalServer((req, res) => {
      req.resume();
      req.on('end', () => {
        n++;
        if (answer === 'never') return;
        res.writeHead(answer === 'ok' ? 200 : answer(n)).end('{}');
      });
    });
    cleanups.push(() => server.close());
    return server;
  };
  const spoolCleanup = (path: string | undefined) => {
    if (path) cleanups.push(() => [path, cursorPath(path)].forEach((p) => rmSync(p, { force: true })));
  };

  it('removes the spool once everything in it was forwarded, and says so last', async () => {
    const target = await app('ok');
    const r = recorder();
    const engine = new ListenEngine(plan({ forward: { url: target.url, timeout: { ms: 5000, text: '5s' } } }), { clock: realClock, onEvent: r.onEvent });
    const ready = await engine.start();
    spoolCleanup(ready.spool);
    expect(ready.spool).toBeDefined();
    expect(await post(ready.url, '{"_id":"c1","Status":"Open"}', KEY)).toBe(200);
    expect((await r.next('forward answered 2xx', isForward)).ok).toBe(true);
    expect(existsSync(ready.spool!)).toBe(true);
    // Checked as the engine reports the end: the spool and its cursor are gone by then.
    let atStop: { spool: boolean; cursor: boolean } | undefined;
    const stopped = r.next('stopped', isStopped).then((e) => {
      atStop = { spool: existsSync(ready.spool!), cursor: existsSync(cursorPath(ready.spool!)) };
      return e;
    });
    const stop = childStop();
    const run = engine.run(stop, new AbortController().signal);
    stop.abort('test');
    await run;
    expect(await stopped).toMatchObject({ type: 'stopped', pending: 0, spool: { path: ready.spool, kept: false }, stats: { delivered: 1 } });
    expect(atStop).toEqual({ spool: false, cursor: false });
    expect(r.events.at(-1)?.type).toBe('stopped');
    expect(r.events.map((e) => e.type)).toEqual(['delivery', 'forward', 'stopped']);
  });

  it('a delivery that completes while the run drains is answered 200 and kept in the spool, which stays', async () => {
    // The app never answers: nothing recorded is ever forwarded.
    const target = await app('never');
    const r = recorder();
    const engine = new ListenEngine(plan({ forward: { url: target.url, timeout: { ms: 60_000, text: '1m' } } }), { clock: realClock, onEvent: r.onEvent });
    const ready = await engine.start();
    spoolCleanup(ready.spool);
    const stop = childStop();
    const run = engine.run(stop, new AbortController().signal);
    const body = Buffer.from('{"_id":"late","Status":"Done"}');
    // A delivery in flight: its headers are in (the listener invited the body), its body is not yet.
    const answer = new Promise<number>((resolve, reject) => {
      const req = httpRequest(ready.url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length, 'x-signingKey': KEY, expect: '100-continue' } });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.on('continue', () => {
        req.write(body.subarray(0, 5));
        // Stop; once the listener refuses new connections the drain has begun: the rest of the body goes then.
        stop.abort('test');
        void refused(Number(new URL(ready.url).port)).then(() => req.end(body.subarray(5)), reject);
      });
    });
    expect(await answer).toBe(200);
    await run;
    const stopped = await r.next('stopped', isStopped);
    expect(stopped).toMatchObject({ pending: 1, spool: { path: ready.spool, kept: true }, stats: { delivered: 1 } });
    const lines = readFileSync(ready.spool!, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { seq: number; bodyBase64: string });
    expect(lines.map((l) => [l.seq, Buffer.from(l.bodyBase64, 'base64').toString()])).toEqual([[1, body.toString()]]);
  });

  it('a start that fails (the port is taken) closes the record file and frees its lock for the next listener', async () => {
    const record = join(tempDir(), 'hooks.jsonl');
    const taken = await startLocalServer((_req, res) => res.end());
    cleanups.push(() => taken.close());
    const port = Number(new URL(taken.url).port);
    const first = new ListenEngine(plan({ record, port }), { clock: realClock, onEvent: () => {} });
    const err = await first.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CardboardError);
    expect(err).not.toBeInstanceOf(UsageError);
    expect((err as Error).message).toBe(`cannot listen on 127.0.0.1:${port} (EADDRINUSE)`);
    const second = new ListenEngine(plan({ record }), { clock: realClock, onEvent: () => {} });
    await second.start();
    const stop = childStop();
    stop.abort('test');
    await second.run(stop, new AbortController().signal);
  });

  it('reports each forward try with what it did to the outage: it starts at the first failure and ends at the next success', async () => {
    const target = await app((n) => (n === 1 ? 503 : 200));
    const r = recorder();
    const engine = new ListenEngine(plan({ record: join(tempDir(), 'hooks.jsonl'), forward: { url: target.url, timeout: { ms: 5000, text: '5s' } } }), { clock: realClock, onEvent: r.onEvent });
    const ready = await engine.start();
    const stop = childStop();
    const run = engine.run(stop, new AbortController().signal);
    expect(await post(ready.url, '{"_id":"o1"}', KEY)).toBe(200);
    await r.next('a forward that worked', (e): e is Extract<ListenEvent, { type: 'forward' }> => isForward(e) && e.ok);
    const tries = r.events.filter(isForward);
    expect(tries.map((e) => [e.ok, e.outage.phase])).toEqual([
      [false, 'start'],
      [true, 'end'],
    ]);
    expect(tries[0]!.outage).toMatchObject({ state: { reason: '503', tries: 1, pending: 1 } });
    expect(tries[1]!.outage).toMatchObject({ tries: 2 });
    expect(engine.outages()).toEqual([]);
    stop.abort('test');
    await run;
  });
});
