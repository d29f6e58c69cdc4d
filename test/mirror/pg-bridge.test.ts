// The synchronous bridge to a worker thread (src/mirror/pg/bridge.ts): calls answer in order with the worker's
// values, errors keep their class, hint and exit code, a worker that crashes, exits or stops answering is a clear
// error naming the mirror's location (never a hang), and close() ends the thread so the process can end.
import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { CardboardError, UsageError } from '../../src/errors.js';
import { SyncThread } from '../../src/mirror/pg/bridge.js';
import { pgLocation, pgTarget } from '../../src/mirror/pg/location.js';
import { PgMirror } from '../../src/mirror/pg/store.js';
import { PG_REQUIRED, PG_SKIPPED, pgClient, pgSchema } from '../helpers/postgres.js';

const WORKER = new URL('../fixtures/mirror/sync-worker.mjs', import.meta.url);
const LOCATION = 'postgres://u@db.example/x';

const threads: SyncThread[] = [];
afterEach(() => {
  for (const t of threads.splice(0)) {
    try {
      t.close();
    } catch {
      // a thread a test broke on purpose
    }
  }
});

function start(job: Record<string, unknown> = {}, env: Record<string, string | undefined> = {}, timeoutMs?: number): SyncThread {
  const t = SyncThread.start(WORKER, job, env, { location: LOCATION, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
  threads.push(t);
  t.call('open');
  return t;
}

/** What `fn` throws. */
function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    if (err instanceof Error) return err;
    throw err;
  }
  throw new Error('nothing was thrown');
}

describe('SyncThread', () => {
  it('answers each call synchronously, in order, with the job and the environment it was started with', () => {
    const t = start({ n: 1 }, { BRIDGE_TEST_VAR: 'from the run', UNSET: undefined });
    expect(t.call('echo', 'a', [1, 2], { b: true })).toEqual({ args: ['a', [1, 2], { b: true }], calls: 1, env: 'from the run', job: { n: 1 } });
    expect(t.call<{ calls: number }>('echo').calls).toBe(2);
    // A value that takes the worker's event loop a while (a timer) is waited for.
    expect(t.call('later', 30, 'late')).toBe('late');
    expect(t.call<{ calls: number }>('echo').calls).toBe(3);
  });

  it("does not see the process's environment, only the one given", () => {
    process.env.BRIDGE_TEST_VAR = 'of the process';
    try {
      expect(start().call<{ env: unknown }>('echo').env).toBeNull();
    } finally {
      delete process.env.BRIDGE_TEST_VAR;
    }
  });

  it('throws errors with their class, message, hint, suggestion, exit code and cause, and goes on answering', () => {
    const t = start();
    const usage = thrown(() => t.call('usage'));
    expect(usage).toBeInstanceOf(UsageError);
    expect(usage).toMatchObject({ message: 'bad thing', hint: 'fix the thing', suggestion: 'thing', exitCode: 2 });
    const busy = thrown(() => t.call('busy'));
    expect(busy).toBeInstanceOf(CardboardError);
    expect(busy).not.toBeInstanceOf(UsageError);
    expect(busy).toMatchObject({ message: 'stayed busy', hint: 'wait', exitCode: 3 });
    expect(busy.cause).toMatchObject({ message: 'inner', code: '55P03' });
    const bug = thrown(() => t.call('bug'));
    expect(bug).not.toBeInstanceOf(CardboardError);
    expect(bug).toMatchObject({ name: 'TypeError', message: 'a bug' });
    expect(thrown(() => t.call('nothing'))).toMatchObject({ message: expect.stringContaining('no operation nothing') });
    expect(t.call<{ calls: number }>('echo').calls).toBe(1);
  });

  it('throws the error of open at the open call', () => {
    const t = SyncThread.start(WORKER, { failOpen: true }, {}, { location: LOCATION });
    threads.push(t);
    expect(thrown(() => t.call('open'))).toMatchObject({ message: 'cannot open', hint: 'open hint', exitCode: 1 });
    t.close();
  });

  it('turns a worker that crashes during a call into an error naming the location, for this call and every later one', () => {
    const t = start();
    const err = thrown(() => t.call('crash'));
    expect(err).toBeInstanceOf(CardboardError);
    expect(err.message).toBe(`The connection to the mirror at ${LOCATION} was lost: its thread stopped (an error no call caught: boom outside a call).`);
    expect(err.cause).toMatchObject({ message: 'boom outside a call' });
    expect(thrown(() => t.call('echo'))).toBe(err);
    t.close();
  });

  it('tells at the next call of a worker that crashed between calls', async () => {
    const t = start();
    expect(t.call('crashLater')).toBe('ok');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(thrown(() => t.call('echo')).message).toContain('its thread stopped (an error no call caught: boom while idle)');
  });

  it('turns a worker module that cannot load into an error at once, not a wait for the bound', () => {
    const t = SyncThread.start(new URL('./no-such-worker.mjs', WORKER), {}, {}, { location: LOCATION });
    threads.push(t);
    const err = thrown(() => t.call('open'));
    expect(err).toBeInstanceOf(CardboardError);
    expect(err.message).toMatch(/^The connection to the mirror at postgres:\/\/u@db\.example\/x was lost: its thread stopped \(it could not start: Cannot find module .*no-such-worker\.mjs/);
  });

  it('turns a worker that exits into an error with its exit code', () => {
    const t = start();
    expect(thrown(() => t.call('exit', 3)).message).toBe(`The connection to the mirror at ${LOCATION} was lost: its thread stopped (it exited with code 3).`);
  });

  it('gives up a call that gets no answer within its bound, and ends the thread', () => {
    const t = start({}, {}, 2000);
    const err = thrown(() => t.call('hang'));
    expect(err).toBeInstanceOf(CardboardError);
    expect(err.message).toBe(`The connection to the mirror at ${LOCATION} was lost: its thread stopped (no answer in 2s).`);
    t.close();
  });

  it('close() calls close in the worker, and throws its error after ending the thread', () => {
    const t = SyncThread.start(WORKER, { failClose: true }, {}, { location: LOCATION });
    t.call('open');
    expect(thrown(() => t.close()).message).toBe('close failed');
    expect(thrown(() => t.call('echo')).message).toContain('was closed');
    t.close();
  });
});

describe('a process with a thread', () => {
  const script = (close: boolean) => `
    import { SyncThread } from ${JSON.stringify(new URL('../../dist/mirror/pg/bridge.js', import.meta.url).href)};
    const t = SyncThread.start(new URL(${JSON.stringify(WORKER.href)}), {}, {}, { location: 'x' });
    t.call('open');
    t.call('later', 0, 'x');
    ${close ? "t.close(); console.log('closed');" : "console.log('left open');"}
  `;

  it.each([true, false])('ends when its work is done (close() called: %s)', (close) => {
    // A thread left open is unref'd; one closed is ended. Either way the process ends with its own exit code.
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script(close)], { encoding: 'utf8', timeout: 20_000 });
    expect(child.stderr).toBe('');
    expect(child.signal).toBeNull();
    expect(child.stdout.trim()).toBe(close ? 'closed' : 'left open');
    expect(child.status).toBe(0);
  });

  it('ends with a worker that hangs when close() gives it up', () => {
    const child = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { SyncThread } from ${JSON.stringify(new URL('../../dist/mirror/pg/bridge.js', import.meta.url).href)};
         const t = SyncThread.start(new URL(${JSON.stringify(WORKER.href)}), {}, {}, { location: 'x', timeoutMs: 2000 });
         t.call('open');
         t.call('echo');
         try { t.call('hang'); } catch (e) { console.log(e.message); }
         t.close();`,
      ],
      { encoding: 'utf8', timeout: 20_000 },
    );
    expect(child.stderr).toBe('');
    expect(child.signal).toBeNull();
    expect(child.stdout).toContain('no answer');
    expect(child.status).toBe(0);
  });
});

describe.skipIf(PG_SKIPPED !== undefined && !PG_REQUIRED)('a store on the test server, through its thread', () => {
  it('is there to run against', () => {
    expect(PG_SKIPPED, PG_SKIPPED).toBeUndefined();
  });

  it('a session the server ends is a lost connection naming the location (exit 1), not a bug', async () => {
    const db = await pgSchema();
    const url = `${db.url}&application_name=bridge_${db.schema}`;
    const store = PgMirror.open(pgTarget(url, {}), { baseUrl: 'http://x/', server: 'x', id: 'b' }, true);
    try {
      expect(store.count()).toBe(0);
      const admin = await pgClient();
      try {
        await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [`bridge_${db.schema}`]);
      } finally {
        await admin.end();
      }
      // The thread hears of the end on its event loop, which runs while this one waits.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const err = thrown(() => store.count());
      expect(err).toBeInstanceOf(CardboardError);
      expect(err).toMatchObject({ exitCode: 1 });
      expect(err.message).toMatch(new RegExp(`^The connection to the mirror's database at ${pgLocation(url).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} was lost: `));
    } finally {
      store.close();
    }
  });
});

