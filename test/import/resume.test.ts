// Rows matched to an earlier run's journal by content (ResumeIndex): shifts, edits, identical rows.
import { describe, expect, it } from 'vitest';
import type { JournalEntry } from '../../src/import/journal.js';
import { ResumeIndex, SHIFT_WINDOW } from '../../src/import/resume.js';

const d = (name: string) => name.padEnd(16, '0');
const rec = (line: number, name: string, state: JournalEntry['state'] = 'created'): JournalEntry => ({ line, digest: d(name), state, id: `id-${name}`, run: 0 });

describe('ResumeIndex', () => {
  it('knows a row by its content at any line; each record serves one row', () => {
    const r = new ResumeIndex([rec(2, 'a'), rec(3, 'b'), rec(4, 'a')]);
    expect(r.match(3, d('a'))).toMatchObject({ kind: 'known', entry: { line: 2 } });
    expect(r.match(2, d('a'))).toMatchObject({ kind: 'known', entry: { line: 4 } });
    // A third identical row: both records are taken, so it is new content.
    expect(r.match(9, d('a'))).toEqual({ kind: 'new' });
    expect(r.match(4, d('b'))).toMatchObject({ kind: 'known', entry: { line: 3 } });
  });

  it('a row inserted above sent rows is new once a later row claims the record of its line', async () => {
    const r = new ResumeIndex([rec(2, 'a'), rec(3, 'b')]);
    const inserted = r.match(2, d('x'));
    expect(inserted.kind).toBe('pending');
    expect(r.match(3, d('a'))).toMatchObject({ kind: 'known' });
    expect(await (inserted as { decided: Promise<unknown> }).decided).toEqual({ kind: 'new' });
  });

  it('a row whose record at its line is never claimed was changed: decided after the window or at the end', async () => {
    const r = new ResumeIndex([rec(2, 'a'), rec(3, 'b', 'sending'), rec(4, 'c', 'rejected')]);
    const changed = r.match(2, d('a2')) as { kind: 'pending'; decided: Promise<unknown> };
    const late = r.match(3, d('b2')) as { kind: 'pending'; decided: Promise<unknown> };
    // A record that put nothing on the board (rejected) does not hold its line.
    expect(r.match(4, d('c2'))).toEqual({ kind: 'new' });
    r.advance(2 + SHIFT_WINDOW);
    expect(await changed.decided).toMatchObject({ kind: 'changed', entry: { line: 2, state: 'created' } });
    r.end();
    expect(await late.decided).toMatchObject({ kind: 'changed', entry: { line: 3, state: 'sending' } });
  });

  it('a hundred thousand identical rows: no search of the list per row (a quadratic match would run past the timeout)', () => {
    const n = 100_000;
    const r = new ResumeIndex(Array.from({ length: n }, (_, i) => rec(i + 2, 'same')));
    let known = 0;
    // Shifted by one: no row finds the record of its own line first.
    for (let i = 0; i < n; i++) if (r.match(i + 3, d('same')).kind === 'known') known++;
    expect(known).toBe(n);
  });
});
