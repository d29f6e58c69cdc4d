// The synchronous bridge to a worker thread (src/mirror/pg/bridge.ts): calls answer in order with the worker's
// values, errors keep their class, hint and exit code, a worker that crashes, exits or stops answering is a clear
// error naming the mirror's location (never a hang), and close() ends the thread so the process can end.
import { spawn, spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { CardboardError, UsageError } from '../../src/errors.js';
import { SyncThread } from '../../src/mirror/pg/bridge.js';
import { pgLocation, pgTarget } from '../../src/mirror/pg/location.js';
import { PgMirror } from '../../src/mirror/pg/store.js';
import { PG_REQUIRED, PG_SKIPPED, PG_SOCKET, pgSchema } from '../helpers/postgres.js';

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

/** A process that locks SCHEMA.cards, says so, and after a moment ends the sessions named APP. */
const TERMINATOR = `
  import pg from ${JSON.stringify(new URL('../../node_modules/pg/lib/index.js', import.meta.url).href)};
  const c = new pg.Client({ host: ${JSON.stringify(PG_SOCKET ?? '')}, user: 'postgres', database: 'postgres' });
  await c.connect();
  await c.query('BEGIN');
  await c.query('LOCK TABLE ' + process.env.SCHEMA + '.cards IN ACCESS EXCLUSIVE MODE');
  process.stdout.write('locked\\n');
  await new Promise((resolve) => setTimeout(resolve, 500));
  await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [process.env.APP]);
  await c.query('ROLLBACK');
  await c.end();
`;

describe.skipIf(PG_SKIPPED !== undefined && !PG_REQUIRED)('a store on the test server, through its thread', () => {
  it('is there to run against', () => {
    expect(PG_SKIPPED, PG_SKIPPED).toBeUndefined();
  });

  it('a session the server ends under a call is a lost connection naming the location (exit 1), not a bug', async () => {
    const db = await pgSchema();
    const app = `bridge_${db.schema}`;
    const url = `${db.url}&application_name=${app}`;
    const store = PgMirror.open(pgTarget(url, {}), { baseUrl: 'http://x/', server: 'x', id: 'b' }, true);
    try {
      expect(store.count()).toBe(0);
      // Another process locks the cards table, so that the next read waits on the server, then ends this
      // store's sessions while it waits: this thread is blocked in the call the whole time.
      const other = spawn(process.execPath, ['--input-type=module', '-e', TERMINATOR], { env: { ...process.env, SCHEMA: db.schema, APP: app }, stdio: ['ignore', 'pipe', 'inherit'] });
      const ended = new Promise((resolve) => other.on('exit', resolve));
      await new Promise<void>((resolve) => other.stdout.once('data', () => resolve()));
      const err = thrown(() => store.count());
      await ended;
      expect(err).toBeInstanceOf(CardboardError);
      expect(err).toMatchObject({ exitCode: 1 });
      expect(err.message).toBe(`The connection to the mirror's database at ${pgLocation(url)} was lost: terminating connection due to administrator command.`);
    } finally {
      store.close();
    }
  });
});

