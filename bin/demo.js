#!/usr/bin/env node
// `npm run demo`: the main job end to end against the bundled emulator. Starts the emulator on a
// free port, imports fixtures/demo-cards.csv with a column mapping, then lists the board's cards.
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmulator } from '../dist/emulator/server.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'bin', 'cardboard.js');
const csv = join(root, 'fixtures', 'demo-cards.csv');

const emulator = await startEmulator({ port: 0 });
const [boardId, board] = Object.entries(emulator.boards)[0];
const env = {
  ...process.env,
  CARDBOARD_BASE_URL: emulator.url,
  CARDBOARD_BOARD: boardId,
  CARDBOARD_TOKEN: board.token,
  CARDBOARD_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'cardboard-demo-')),
};

function step(title, args) {
  process.stderr.write(`\n$ cardboard ${args.join(' ')}    # ${title}\n`);
  const r = spawnSync(process.execPath, [cli, ...args], { env, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`cardboard ${args[0]} exited ${r.status}`);
}

let code = 0;
try {
  process.stderr.write(`emulator: ${emulator.url} (board ${boardId})\n`);
  step('the exact field names', ['schema']);
  step('import the demo CSV, mapping its Assignee column to the Owner field', [
    'import', csv, '--map', 'Assignee=Owner', '--journal', join(env.CARDBOARD_CONFIG_DIR, 'demo.journal'),
  ]);
  step('every card, streamed page by page', ['card', 'list', '--all', '--format', 'csv']);
} catch (err) {
  process.stderr.write(`demo failed: ${err.message}\n`);
  code = 1;
} finally {
  await emulator.close();
}
process.exit(code);
