// The emulator as a child process (`cardboard emulator --port 0 …`), so it never shares an event loop
// with a measured client; and the bench board every scenario writes to.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, OUT, childEnv } from './proc.mjs';

/** The board every scenario uses: `Always Create New`, so each imported row is one new card. */
export const BOARD = 'bench';
export const TOKEN = 'bench-token-not-secret';
export const FIELDS = ['Name', 'Status', 'Owner', 'Priority'];

function boardsFile(updateMode = 'Always Create New') {
  mkdirSync(OUT, { recursive: true });
  const path = join(OUT, `boards-${updateMode.replaceAll(' ', '-')}.json`);
  const board = { token: TOKEN, fields: FIELDS, updateMode, createFields: false, webhookUrl: null };
  writeFileSync(path, JSON.stringify({ [BOARD]: board }, null, 2));
  return path;
}

/**
 * Start `cardboard emulator` with the bench board. opts: pageSize, rateLimit ('1200/min'), burst, seedCards,
 * updateMode (default 'Always Create New'), faults ('500-after:0.05,…') and faultSeed.
 * Resolves with { url, env (CARDBOARD_* for the CLI), requests(), close() } once it listens.
 */
export function startEmulator(opts = {}) {
  const args = [BIN, 'emulator', '--port', '0', '--boards', boardsFile(opts.updateMode), '--page-size', String(opts.pageSize ?? 50)];
  if (opts.rateLimit) args.push('--rate-limit', opts.rateLimit, '--burst', String(opts.burst ?? 20));
  if (opts.seedCards) args.push('--seed-cards', String(opts.seedCards));
  if (opts.faults) args.push('--faults', opts.faults, '--fault-seed', String(opts.faultSeed ?? 1));
  const child = spawn(process.execPath, args, { env: childEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  return new Promise((resolve, reject) => {
    const onExit = (code) => reject(new Error(`emulator exited (${code}): ${err}`));
    child.on('exit', onExit);
    child.stderr.on('data', (b) => {
      err += b;
      const m = /listening on (\S+)/.exec(err);
      if (!m) return;
      child.stderr.removeAllListeners('data');
      child.stderr.resume();
      child.off('exit', onExit);
      const url = m[1];
      resolve({
        url,
        pid: child.pid,
        env: { CARDBOARD_BASE_URL: url, CARDBOARD_BOARD: BOARD, CARDBOARD_TOKEN: TOKEN },
        /** The emulator's state: per board, its cards in order (test view). */
        state: async () => (await fetch(`${url}/__emulator/state`)).json(),
        /** The emulator's record of requests (test view; last 50,000). */
        requests: async () => (await fetch(`${url}/__emulator/requests`)).json(),
        close: () =>
          new Promise((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}
