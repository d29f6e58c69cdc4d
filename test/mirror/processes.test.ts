// The mirror shared by processes, as a listener and a pull share it, on each engine: child processes running the
// built store (dist/) write at once and all succeed, and a child killed with SIGKILL loses no write it
// acknowledged.
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openMirror } from '../../src/mirror/open.js';
import { tempDir } from '../helpers/cli.js';
import { absent, ENGINES } from '../helpers/engines.js';
import { until } from '../import/helpers.js';
import { BOARD } from './helpers.js';

const OPEN = pathToFileURL(fileURLToPath(new URL('../../dist/mirror/open.js', import.meta.url))).href;

/** A child node process running `body` (an ES module with `openMirror`, `env` and `board` in scope), its stdout collected. */
function child(body: string, env: Record<string, string>): { proc: ChildProcess; out: () => string; exit: Promise<number | null> } {
  const script = join(tempDir('cardboard-mirror-child-'), 'child.mjs');
  writeFileSync(script, `import { openMirror } from ${JSON.stringify(OPEN)};\nconst env = ${JSON.stringify(env)};\nconst board = ${JSON.stringify(BOARD)};\n${body}\n`);
  const proc = spawn(process.execPath, [script], { stdio: ['pipe', 'pipe', 'inherit'] });
  onTestFinished(() => void proc.kill('SIGKILL'));
  let out = '';
  proc.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return { proc, out: () => out, exit };
}

describe.each(ENGINES)('a mirror shared by processes ($name)', (engine) => {
  if (absent(engine)) return;

  it('two processes writing at once both succeed: each write waits for the other instead of failing', async () => {
    const env = { ...(await engine.env()) };
    const writer = (name: string) =>
      child(
        `const store = openMirror(env, board, { create: true });
         process.stdout.write('ready\\n');
         process.stdin.once('data', () => {
           for (let i = 0; i < 300; i++) {
             if (i % 2) store.applyWrites([{ _id: '${name}' + i, n: i }], 't');
             else store.applyDeliveries([{ kind: 'card', receivedAt: 't', card: { _id: '${name}' + i, n: i } }]);
           }
           store.close();
         });`,
        env,
      );
    const a = writer('a');
    const b = writer('b');
    await until(() => a.out() === 'ready\n' && b.out() === 'ready\n', 'both writers to open the mirror');
    a.proc.stdin!.end('go\n');
    b.proc.stdin!.end('go\n');
    expect(await Promise.all([a.exit, b.exit])).toEqual([0, 0]);
    const store = openMirror(env, BOARD, { create: false });
    onTestFinished(() => store.close());
    expect(store.count()).toBe(600);
    expect(store.status().deliveries.applied).toBe(300);
  });

  it.each([40, 137])('a process killed with SIGKILL after acknowledging %i deliveries loses none of them', async (acks) => {
    const env = { ...(await engine.env()) };
    const listener = child(
      `const store = openMirror(env, board, { create: true });
       for (let i = 1; ; i++) {
         store.applyDeliveries([{ kind: 'card', receivedAt: 't', card: { _id: 'c' + i, Status: 'Open', n: i } }]);
         process.stdout.write(i + '\\n');
       }`,
      env,
    );
    const acknowledged = () => listener.out().split('\n').filter((l) => l !== '').map(Number);
    await until(() => acknowledged().length >= acks, `${acks} acknowledged deliveries`);
    listener.proc.kill('SIGKILL');
    await listener.exit;
    const store = openMirror(env, BOARD, { create: false });
    onTestFinished(() => store.close());
    const acked = acknowledged();
    expect(acked.length).toBeGreaterThanOrEqual(acks);
    expect(acked.filter((i) => store.card(`c${i}`)?.n !== i)).toEqual([]);
    expect(store.status().deliveries.applied).toBeGreaterThanOrEqual(acked.length);
  });
});

describe('first opens of a new SQLite mirror at once', () => {
  // The first open turns the new file to WAL mode, which SQLite refused at once (SQLITE_BUSY, no busy wait)
  // while the other process read the file: several tries in 40 failed with "database is locked".
  it('two processes opening the same new file at once both succeed, try after try', async () => {
    const opener = (env: Record<string, string>) =>
      child(
        `process.stdout.write('ready\\n');
         process.stdin.once('data', () => {
           try { openMirror(env, board, { create: true }).close(); process.stdout.write('ok\\n'); }
           catch (err) { process.stdout.write(String(err && err.message) + '\\n'); }
         });`,
        env,
      );
    const failed: string[] = [];
    for (let i = 0; i < 40; i++) {
      const env = { CARDBOARD_MIRROR: join(tempDir('cardboard-mirror-'), 'm.db') };
      const pair = [opener(env), opener(env)];
      await until(() => pair.every((p) => p.out() === 'ready\n'), 'both processes to start');
      for (const p of pair) p.proc.stdin!.end('go\n');
      await Promise.all(pair.map((p) => p.exit));
      failed.push(...pair.map((p) => p.out().replace('ready\n', '').trim()).filter((out) => out !== 'ok'));
    }
    expect(failed).toEqual([]);
  }, 120_000);
});
