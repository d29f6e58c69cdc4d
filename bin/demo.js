#!/usr/bin/env node
// `npm run demo`: the main job end to end against the bundled emulator. Starts the emulator on a
// free port, imports fixtures/demo-cards.csv with a column mapping, then lists the board's cards.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
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

// Asynchronous on purpose: the emulator runs in this process, so its event loop must stay free.
async function step(title, args) {
  process.stderr.write(`\n$ cardboard ${args.join(' ')}    # ${title}\n`);
  const child = spawn(process.execPath, [cli, ...args], { env, stdio: 'inherit' });
  const [status] = await once(child, 'exit');
  if (status !== 0) throw new Error(`cardboard ${args[0]} exited ${status}`);
}

let code = 0;
try {
  process.stderr.write(`emulator: ${emulator.url} (board ${boardId})\n`);
  await step('the exact field names', ['schema']);
  await step('import the demo CSV, mapping its Assignee column to the Owner field', [
    'import', csv, '--map', 'Assignee=Owner', '--journal', join(env.CARDBOARD_CONFIG_DIR, 'demo.journal'),
  ]);
  await step('every card, streamed page by page', ['card', 'list', '--all', '--format', 'csv']);
} catch (err) {
  process.stderr.write(`demo failed: ${err.message}\n`);
  code = 1;
} finally {
  await emulator.close();
}
process.exit(code);
