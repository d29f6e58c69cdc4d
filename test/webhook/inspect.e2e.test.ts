import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { request } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { INSPECT_FIRST_PORT, INSPECT_LAST_PORT } from '../../src/commands/webhook/inspect.js';
import { webhookListenCommand } from '../../src/commands/webhook/listen.js';
import { type Context, createContext } from '../../src/context.js';
import { UsageError } from '../../src/errors.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { inspectingListener, inspectorHistory, post, type RunningListener } from './helpers.js';

const KEY = 'sk-inspect-e2e-0123';
let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

const listen = (args: string[]): Promise<RunningListener & { page: string }> => inspectingListener(args, KEY, cleanup);

describe('webhook listen --inspect parsing', () => {
  const ctx = createContext({ env: {} });
  async function parsed(args: string[]): Promise<unknown> {
    const run = vi.fn(async (_ctx: Context, _opts: unknown) => {});
    const program = new Command().exitOverride();
    webhookListenCommand(program, () => ctx, run);
    await program.parseAsync(['listen', ...args], { from: 'user' });
    return (run.mock.calls[0]![1] as { inspect?: unknown }).inspect;
  }

  it('alone tries 4040 to 4060 in order; with a port, only that one', async () => {
    expect(await parsed([])).toBeUndefined();
    const ports = Array.from({ length: INSPECT_LAST_PORT - INSPECT_FIRST_PORT + 1 }, (_, i) => 4040 + i);
    expect(await parsed(['--inspect'])).toEqual({ ports, explicit: false });
    expect(ports.at(-1)).toBe(4060);
    expect(await parsed(['--inspect', '5000'])).toEqual({ ports: [5000], explicit: true });
    expect(await parsed(['--inspect', '0'])).toEqual({ ports: [0], explicit: true });
    await expect(parsed(['--inspect', 'many'])).rejects.toThrow(UsageError);
    await expect(parsed(['--inspect', '70000'])).rejects.toThrow(/--inspect: "70000" is not a port number/);
  });
});

describe('webhook listen --inspect', () => {
  it('prints the page URL once on stderr, even with --quiet, and nowhere else; the page shows the recorded history first', async () => {
    const dir = tempDir();
    const record = join(dir, 'hooks.jsonl');
    const first = await listen(['--record', record, '--inspect', '0', '--quiet']);
    expect(await post(first.url, '{"_id":"c1","Status":"Open"}', KEY)).toBe(200);
    const r1 = await first.stop('SIGTERM');
    expect(r1.signal).toBe('SIGTERM');

    const l = await listen(['--record', record, '--inspect', '0', '--quiet', '--json']);
    expect(l.page).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{32}\/$/);
    // --inspect 0 picks a port again: the line says the URL changed.
    expect(l.stderr()).toContain(`Inspector: ${l.page} (the token in this URL is the page's key, kept in ${record}.inspector; the URL changed: port ${new URL(first.page).port} of the last run is not this run's, open the page again at this URL)\n`);
    expect(l.stderr().split('\n')[0]).toMatch(/^Listening on /);
    expect(await post(l.url, '{"_id":"c1","Status":"Done"}', KEY)).toBe(200);
    await l.waitFor(/"Done"/, 'stdout');
    const events = await inspectorHistory(l.page);
    expect(events.map((e) => e.event)).toEqual(['entry', 'entry', 'ready', 'stats']);
    expect(events[0]!.data).toMatchObject({ seq: 1, recorded: true, verified: true, change: { event: 'new', cardId: 'c1' } });
    expect(events[1]!.data).toMatchObject({ seq: 2, recorded: false, change: { event: 'changed', changes: [{ field: 'Status', before: 'Open', after: 'Done' }] } });
    expect(events[2]!.data).toEqual({ forwardTo: null, recording: true, kept: 2, dropped: 0 });
    expect(events[3]!.data).toEqual({ delivered: 1, refused: 0 });
    const token = new URL(l.page).pathname.split('/')[1]!;
    const r = await l.stop('SIGTERM');
    expect(r.signal).toBe('SIGTERM');
    expect(r.stderr.split(token).length - 1).toBe(1);
    expect(r.stdout).not.toContain(token);
    expect(readFileSync(record, 'utf8')).not.toContain(token);
    // The server ended with the run.
    await expect(request(l.page)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('a busy --inspect port is an error naming it (exit 1), before anything listens', async () => {
    const busy: Server = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    cleanup.push(() => new Promise<void>((r) => busy.close(() => r())));
    const port = (busy.address() as AddressInfo).port;
    const r = await runCli(['webhook', 'listen', '--port', '0', '--inspect', String(port)], { env: { CARDBOARD_SIGNING_KEY: KEY } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cannot open the inspector on 127.0.0.1:${port} (EADDRINUSE)`);
    expect(r.stderr).toContain('--inspect <port>');
    expect(r.stderr).not.toContain('Listening on');
  });

  it('binds 127.0.0.1 even when the listener binds every interface', async () => {
    const l = await listen(['--host', '0.0.0.0', '--inspect', '0']);
    const page = new URL(l.page);
    expect(page.hostname).toBe('127.0.0.1');
    const res = await request(l.page);
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    const outside = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal);
    if (outside) {
      // The listener answers on this machine's other address; the inspector does not.
      expect(await post(`http://${outside.address}:${new URL(l.url).port}/`, '{}', KEY)).toBe(200);
      await expect(request(`http://${outside.address}:${page.port}${page.pathname}`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    }
    const r = await l.stop('SIGTERM');
    expect(r.signal).toBe('SIGTERM');
  });
});
