// Reading a config file loads conf, whose dependency when-exit hooks SIGINT and SIGTERM and sends the signal
// to the process again after its own callbacks: a second signal, which the run's Cancellation reads as a
// second Ctrl-C (the process ended at once, in the middle of a graceful stop). The store must leave no
// such hook behind.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';

const STORE = pathToFileURL(join(import.meta.dirname, '../../dist/config/store.js')).href;

/** Run `body` as an ES module in a fresh Node (nothing loaded yet); its stdout. */
function fresh(body: string): string {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', body], { encoding: 'utf8' });
  expect(r.stderr).toBe('');
  return r.stdout.trim();
}

describe('the config store and process signals', () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ boards: { work: { id: 'b1', baseUrl: 'http://127.0.0.1:1', token: 'tok-123456789' } } }), { mode: 0o600 });
  const count = "JSON.stringify(['SIGINT', 'SIGTERM', 'SIGHUP'].map((s) => process.listeners(s).length))";

  it('conf itself hooks SIGINT and SIGTERM when imported (the hazard this guards against)', () => {
    expect(JSON.parse(fresh(`await import('conf'); console.log(${count});`))).toEqual([1, 1, 1]);
  });

  it('reading a stored config leaves SIGINT and SIGTERM to the run, and other signals as they were', () => {
    const out = fresh(`const { configStore } = await import(${JSON.stringify(STORE)});
      const config = await configStore({ CARDBOARD_CONFIG_DIR: ${JSON.stringify(dir)} }).read();
      console.log(Object.keys(config.boards).join(','), ${count});`);
    expect(out).toBe('work [0,0,1]');
  });
});
