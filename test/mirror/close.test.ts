// A store's close() leaves the file whole. libsql's close() does not close the connection while statements
// prepared on it live (the store keeps its own), and SQLite, closing it at last when V8 collects them (or
// never, when the process ends by process.exit), was what moved the changes from the write-ahead log into
// the file: the file alone held none of them, and changed long after close().
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openMirror } from '../../src/mirror/open.js';
import type { Card } from '../../src/spec-types.js';
import { fillStore } from '../helpers/mirror.js';
import { python } from '../helpers/pty.js';
import { BOARD, mirrorEnv } from './helpers.js';

const CARDS: Card[] = Array.from({ length: 300 }, (_, i) => ({ _id: `c${i}`, Name: `card ${i}` }));

/** The cards in the file alone, as python's sqlite3 reads it with `immutable=1` (no log, no locks: as a copy of the file would be read). */
function cardsInFileAlone(file: string): number {
  const script = 'import sqlite3, sys\nc = sqlite3.connect("file:" + sys.argv[1] + "?immutable=1", uri=True)\nprint(c.execute("SELECT count(*) FROM cards").fetchone()[0])';
  return Number(execFileSync(python(), ['-c', script, file], { encoding: 'utf8' }).trim());
}

/**
 * The store as built, in a node that can collect garbage on demand: fills the mirror at FILE, closes the
 * store, then prints the file's digest, collects (the statements that held the connection go, and SQLite
 * closes it), and prints the digest again.
 */
const FILL_CLOSE_COLLECT = `
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
const { openMirror } = await import(process.env.OPEN_JS);
const file = process.env.FILE;
const digest = () => createHash('sha256').update(readFileSync(file)).digest('hex');
(() => {
  const store = openMirror({ CARDBOARD_MIRROR: file }, JSON.parse(process.env.BOARD), { create: true });
  store.saveSchema([{ name: 'Name', uuid: 'u-name', type: 'text' }]);
  const pull = store.beginPull('2024-01-01T00:00:00.000Z');
  store.savePage(pull, 0, JSON.parse(process.env.CARDS));
  store.finishPull(pull, [], '2024-01-01T00:00:00.000Z');
  store.close();
})();
const closed = digest();
for (let i = 0; i < 3; i++) {
  globalThis.gc();
  await sleep(50);
}
console.log(JSON.stringify({ closed, collected: digest() }));
`;

describe('close()', () => {
  it('leaves every change in the file itself, and the log empty', () => {
    const env = mirrorEnv();
    const store = openMirror(env, BOARD, { create: true });
    fillStore(store, CARDS, { fields: [{ name: 'Name', uuid: 'u-name', type: 'text' }], at: '2024-01-01T00:00:00.000Z' });
    store.close();
    expect(cardsInFileAlone(env.CARDBOARD_MIRROR)).toBe(CARDS.length);
    const log = `${env.CARDBOARD_MIRROR}-wal`;
    expect(existsSync(log) ? statSync(log).size : 0).toBe(0);
  });

  it('nothing writes to the file after close(), when the statements that held the connection are collected', () => {
    const env = mirrorEnv();
    const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', FILL_CLOSE_COLLECT], {
      env: { ...process.env, FILE: env.CARDBOARD_MIRROR, BOARD: JSON.stringify(BOARD), CARDS: JSON.stringify(CARDS), OPEN_JS: new URL('../../dist/mirror/open.js', import.meta.url).href },
      encoding: 'utf8',
    });
    const { closed, collected } = JSON.parse(out) as { closed: string; collected: string };
    expect(collected).toBe(closed);
    expect(cardsInFileAlone(env.CARDBOARD_MIRROR)).toBe(CARDS.length);
  });
});
