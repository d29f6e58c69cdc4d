// How a run stopped by SIGINT or SIGTERM ends: by that signal, once cleaned up, so that the shell sees the
// death (a `for` loop, xargs, make or a `set -e` script stop) and not an exit with 130 (which a shell takes
// as a command that caught Ctrl-C and carried on). In-process: main's end names the signal and its code
// (130, 143). In a fresh Node: exitBySignal itself, a stray handler left by a library, and the fallback.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { SignalSource, StopSignal } from '../../src/interrupt.js';
import { main, runToEnd } from '../../src/main.js';
import { BufferStream } from '../io/buffers.js';
import { childEnv } from '../helpers/cli.js';
import { type LocalServer, startLocalServer } from '../helpers/receiver.js';
import { until } from '../import/helpers.js';

const INTERRUPT = pathToFileURL(join(import.meta.dirname, '../../dist/interrupt.js')).href;

/** Run `body` as an ES module in a fresh Node; how it ended and what it printed. */
function fresh(body: string): { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', body], { encoding: 'utf8' });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

describe('exitBySignal: the process ends by the signal, after its exit hooks', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s: death by it, though handlers of it were left by the run and by libraries (when-exit); exit hooks ran with %d', (signal, code) => {
    const r = fresh(`const { exitBySignal } = await import(${JSON.stringify(INTERRUPT)});
      // when-exit (loaded by conf) answers SIGINT and SIGTERM by sending them again; a stray no-op would swallow them.
      await import('when-exit');
      process.on('SIGINT', () => {});
      process.on('SIGTERM', () => {});
      process.on('exit', (code) => process.stdout.write('exit hook ' + code + '\\n'));
      exitBySignal(${JSON.stringify(signal)});
      process.stdout.write('still running\\n');`);
    expect({ code: r.code, signal: r.signal }, r.stderr).toEqual({ code: null, signal });
    // The exit hooks ran (a lock file is deleted there), then nothing more did.
    expect(r.stdout).toBe(`exit hook ${code}\n`);
  });

  it('where the signal cannot be sent to itself, the process still exits 130 or 143', () => {
    for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
      const failing = fresh(`const { exitBySignal } = await import(${JSON.stringify(INTERRUPT)});
        process.kill = () => { throw Object.assign(new Error('kill EPERM'), { code: 'EPERM' }); };
        exitBySignal(${JSON.stringify(signal)});`);
      expect({ code: failing.code, signal: failing.signal }, failing.stderr).toEqual({ code, signal: null });
      // Windows: no signal of its own to end by; the code alone says it.
      const windows = fresh(`const { exitBySignal } = await import(${JSON.stringify(INTERRUPT)});
        Object.defineProperty(process, 'platform', { value: 'win32' });
        exitBySignal(${JSON.stringify(signal)});`);
      expect({ code: windows.code, signal: windows.signal }, windows.stderr).toEqual({ code, signal: null });
    }
  });
});

describe("main's end: the code of a run stopped by a signal, and the signal it must end by", () => {
  let server: LocalServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  /** A signal source the test fires by hand; a second signal (exit now) would be a test bug. */
  function handFired() {
    let fire: ((s: StopSignal) => void) | undefined;
    const source: SignalSource = {
      listen: (l) => ((fire = l), () => (fire = undefined)),
      exitNow: (s) => {
        throw new Error(`exitNow(${s})`);
      },
    };
    return { source, fire: (s: StopSignal) => fire!(s) };
  }

  /** `card get` against a server that reads requests and never answers, stopped by `signal` once it asked. */
  async function stoppedBy(signal: StopSignal, end: typeof runToEnd | typeof main) {
    let asked = 0;
    server = await startLocalServer((req) => {
      asked++;
      req.resume();
    });
    const url = server.url;
    const signals = handFired();
    const stderr = new BufferStream(false);
    const env = childEnv({ env: { CARDBOARD_BASE_URL: url, CARDBOARD_BOARD: 'b1', CARDBOARD_TOKEN: 'tok-silent-0123' } });
    const run = end(['card', 'get', 'card0001'], { stdout: new BufferStream(false), stderr, env, signals: signals.source });
    await until(() => asked > 0);
    signals.fire(signal);
    return { end: await run, stderr: stderr.text };
  }

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s: the run says it was interrupted, returns %d and names the signal', async (signal, code) => {
    const r = await stoppedBy(signal, runToEnd);
    expect(r.end).toEqual({ code, signal });
    expect(r.stderr).toMatch(/^error: Interrupted/m);
  });

  it('main, for tests and library use, returns the same code and never exits', async () => {
    expect(await stoppedBy('SIGTERM', main)).toMatchObject({ end: 143 });
  });

  it('a reader that went away with the same Ctrl-C (`| jq`): the run still ends by the signal, and nothing is reported', async () => {
    server = await startLocalServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"_id":"card0001","Name":"One"}'));
    const url = server.url;
    const signals = handFired();
    // The card comes; as it is written, Ctrl-C reaches the run and the reader of the pipe dies of it: EPIPE.
    const stdout = new Writable({
      write(_chunk, _enc, done) {
        signals.fire('SIGINT');
        done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
    const stderr = new BufferStream(false);
    const env = childEnv({ env: { CARDBOARD_BASE_URL: url, CARDBOARD_BOARD: 'b1', CARDBOARD_TOKEN: 'tok-silent-0123' } });
    expect(await runToEnd(['card', 'get', 'card0001', '--json'], { stdout, stderr, env, signals: signals.source })).toEqual({ code: 130, signal: 'SIGINT' });
    expect(stderr.text).toBe('');
  });

  it('a run that was not stopped names no signal, whatever its code', async () => {
    const stdout = new BufferStream(false);
    const env = childEnv();
    expect(await runToEnd(['--version'], { stdout, env, signals: handFired().source })).toEqual({ code: 0 });
    expect(await runToEnd(['card', 'nope'], { stdout, stderr: new BufferStream(false), env, signals: handFired().source })).toEqual({ code: 2 });
  });
});
