// The real interactive path of `cardboard import`: the built binary on a
// pseudo-terminal, @inquirer/prompts answered with keystrokes, and ora's progress line on a terminal.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, CHILD_KILL_MS, childEnv, runCli, runMain, tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, startTestEmulator } from '../helpers/emulator.js';
import { PTY_RELAY, python } from '../helpers/pty.js';

const DOWN = '\x1b[B';
const UP = '\x1b[A';
const ENTER = '\r';
const ROWS = 40;
const COLS = 100;

/** Terminal control sequences (CSI, OSC, charset) removed, so the text the user reads can be matched. */
function plain(screen: string): string {
  return screen.replace(/\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[()][0-9A-Za-z]|\x1b[=>78]/g, '');
}

/** A command running on a pseudo-terminal that the test reads and types into. */
interface Terminal {
  /** Everything the terminal has shown so far, escape codes included. */
  raw(): string;
  /** Resolve once `text` (or a match of the pattern) appears after `from` in the plain screen; reject with the screen after CHILD_KILL_MS or at exit. */
  waitFor(text: string | RegExp, from?: number): Promise<number>;
  /** Type keystrokes. */
  type(keys: string): void;
  /** The exit code; null when a signal ended the command (the relay dies by it too). */
  exit: Promise<number | null>;
  /** The exit code, or the signal that ended the command. */
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  child: ChildProcess;
}

const running: ChildProcess[] = [];

function onTerminal(args: string[], env: Record<string, string | undefined>): Terminal {
  // CI unset (prompts and spinners only show without it), NO_COLOR for plain text, a real terminal type.
  const childenv = childEnv({ configDir: env.CARDBOARD_CONFIG_DIR, env: { CI: undefined, TERM: 'xterm', NO_COLOR: '1', ...env } });
  childenv.PTY_ARGS = JSON.stringify([process.execPath, BIN, ...args]);
  childenv.PTY_ROWS = String(ROWS);
  childenv.PTY_COLS = String(COLS);
  const child = spawn(python(), ['-c', PTY_RELAY], { env: childenv, stdio: ['pipe', 'pipe', 'inherit'] });
  running.push(child);
  let screen = '';
  let exited = false;
  const listeners = new Set<() => void>();
  // setEncoding: a chunk boundary inside a multi-byte character (spinner, '…') is decoded whole.
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (b: string) => {
    screen += b;
    for (const l of listeners) l();
  });
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => {
      exited = true;
      for (const l of listeners) l();
      resolve({ code, signal });
    });
  });
  return {
    child,
    exit: ended.then((e) => e.code),
    ended,
    raw: () => screen,
    type: (keys) => child.stdin!.write(keys),
    waitFor(text, from = 0) {
      return new Promise((resolve, reject) => {
        const find = (): number => {
          const s = plain(screen).slice(from);
          if (typeof text === 'string') {
            const i = s.indexOf(text);
            return i < 0 ? -1 : from + i + text.length;
          }
          const m = text.exec(s);
          return m ? from + m.index + m[0].length : -1;
        };
        const check = () => {
          const at = find();
          if (at >= 0 || exited) {
            listeners.delete(check);
            clearTimeout(timer);
            if (at >= 0) resolve(at);
            else reject(new Error(`exited before showing ${String(text)}; the terminal showed:\n${plain(screen)}`));
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`waited ${CHILD_KILL_MS / 1000} s for ${String(text)}; the terminal showed:\n${plain(screen)}`));
        }, CHILD_KILL_MS);
        listeners.add(check);
        check();
      });
    },
  };
}

let emu: RunningEmulator | undefined;
afterEach(async () => {
  // A failed test leaves its terminal running: end it (the pty closes, the command gets SIGHUP).
  for (const child of running.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await emu?.close();
  emu = undefined;
});

function boardEnv(e: RunningEmulator): Record<string, string> {
  return { CARDBOARD_BASE_URL: e.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: e.boards[BOARD_ID]!.token, CARDBOARD_CONFIG_DIR: tempDir() };
}

const PEOPLE = [
  ['Alpha', 'Open', 'ann', 'call back'],
  ['Beta', 'Done', 'bob', ''],
  ['Gamma', 'Blocked', 'cy', 'see "ticket", 42'],
  ['Delta', 'Open', 'di', 'n/a'],
];

function writePeople(): string {
  const quote = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  const lines = ['Name,status,Assignee,Notes', ...PEOPLE.map((r) => r.map(quote).join(','))];
  const file = join(tempDir('cardboard-tty-'), 'people.csv');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/**
 * Answer one select prompt as a user would: wait for the question about `header` and its whole list, then
 * move the cursor from where the prompt put it (the default) to the choice starting with `want`, and Enter.
 * Returns the choices as drawn, in order, the one the cursor started on, and where the drawing ends.
 */
async function pick(t: Terminal, header: string, want: string, from: number): Promise<{ choices: string[]; preset: string; at: number }> {
  const question = `CSV column "${header}"`;
  const asked = await t.waitFor(question, from);
  await t.waitFor('goes to which field?', asked);
  const end = await t.waitFor('skip this column', asked);
  const drawn = plain(t.raw()).slice(asked, end);
  // The list starts on the line after the question; the default choice carries the cursor mark.
  const lines = drawn.split(/\r?\n/).slice(1).filter((l) => l.trim() !== '');
  const choices = lines.map((l) => l.replace(/^\s*❯?\s*/, '').trim());
  const cursor = lines.findIndex((l) => /^\s*❯ /.test(l));
  expect(cursor, `a cursor mark on one choice:\n${drawn}`).toBeGreaterThanOrEqual(0);
  const index = choices.findIndex((c) => c.startsWith(want));
  expect(index, `'${want}' offered for ${header}: ${choices.join(' | ')}`).toBeGreaterThanOrEqual(0);
  t.type((index >= cursor ? DOWN.repeat(index - cursor) : UP.repeat(cursor - index)) + ENTER);
  // The prompt collapses to one line with the answer once Enter is taken.
  const answered = await t.waitFor(new RegExp(`✔ CSV column "${header}".*goes to which field\\?\\s*${want.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`), from);
  return { choices, preset: choices[cursor]!, at: answered };
}

/** Cards on the test board without their ids, by name (requests in flight at once finish in any order). */
function cardsOf(e: RunningEmulator): Record<string, unknown>[] {
  const cards = e.state()[BOARD_ID]!.cards.map(({ _id, ...rest }) => rest);
  return cards.sort((a, b) => String(a.Name).localeCompare(String(b.Name)));
}

const PEOPLE_CARDS = PEOPLE.map(([Name, Status, Owner]) => ({ Name, Status, Owner }));
const EXPECTED_CARDS = [...PEOPLE_CARDS].sort((a, b) => a.Name!.localeCompare(b.Name!));

/** Answer the Create Fields question (No) and map status → Status, Assignee → Owner, skip Notes; returns the screen offset after. */
async function mapPeople(t: Terminal): Promise<{ status: string[]; assignee: string[]; notes: string[]; at: number }> {
  const cf = await t.waitFor('Does this board have Create Fields on');
  await t.waitFor('(y/N)', cf);
  t.type(ENTER);
  const status = await pick(t, 'status', 'Status', cf);
  const assignee = await pick(t, 'Assignee', 'Owner', status.at);
  const notes = await pick(t, 'Notes', 'skip this column', assignee.at);
  // The close field is the default; with no close field, Enter skips.
  expect([status.preset, assignee.preset, notes.preset]).toEqual(['Status  (closest)', 'skip this column', 'skip this column']);
  return { status: status.choices, assignee: assignee.choices, notes: notes.choices, at: notes.at };
}

describe('import on a terminal: interactive mapping with @inquirer/prompts', () => {
  it('maps by keystrokes, previews the rows as sent, saves a --map-file that a non-interactive run then uses', async () => {
    emu = await startTestEmulator();
    const env = boardEnv(emu);
    const file = writePeople();
    const mapPath = join(tempDir('cardboard-tty-map-'), 'people.map.json');
    const t = onTerminal(['import', file, '--concurrency', '2'], env);

    const asked = await mapPeople(t);
    // Closest first: the misspelt-case header proposes its field at the top; fields already sent by
    // another column (Name, then Status) are not offered again.
    expect(asked.status).toEqual(['Status  (closest)', 'Owner', 'Priority', 'skip this column']);
    expect(asked.assignee).toEqual(['Owner', 'Priority', 'skip this column']);
    expect(asked.notes).toEqual(['Priority', 'skip this column']);

    // The preview: the first three rows exactly as they will be POSTed, then the go-ahead.
    const preview = await t.waitFor('First rows as they will be sent:', asked.at);
    const start = await t.waitFor('Start the import with this mapping?', preview);
    const shown = plain(t.raw()).slice(preview, start).split(/\r?\n/).map((l) => l.trim()).filter((l) => l.startsWith('{'));
    expect(shown.map((l) => JSON.parse(l))).toEqual(PEOPLE_CARDS.slice(0, 3));
    expect(emu.requests().filter((r) => r.method === 'POST')).toEqual([]);
    t.type(`y${ENTER}`);

    const save = await t.waitFor('Save this mapping for the next run (--map-file)?', start);
    t.type(`y${ENTER}`);
    const name = await t.waitFor('Save the mapping as', save);
    t.type(mapPath + ENTER);
    const saved = await t.waitFor('Saved. Next time: cardboard import', name);
    await t.waitFor(`--map-file ${mapPath}`, saved);
    const code = await t.exit;
    const screen = plain(t.raw());
    expect(code, screen).toBe(0);
    expect(screen.slice(saved)).toMatch(/created {2,}4\b/);

    // Every row with the mapped fields only: no 'Notes', no 'status', no 'Assignee' key reached the board.
    expect(cardsOf(emu)).toEqual(EXPECTED_CARDS);
    for (const r of emu.requests().filter((q) => q.method === 'POST')) {
      expect(Object.keys(r.body as object).sort()).toEqual(['Name', 'Owner', 'Status']);
    }
    expect(existsSync(mapPath)).toBe(true);
    expect(JSON.parse(readFileSync(mapPath, 'utf8'))).toEqual({ Name: 'Name', status: 'Status', Assignee: 'Owner', Notes: null });

    // Next run, not interactive (CI set, no terminal; run in this process): without the file it refuses
    // (exit 2, nothing sent)...
    const second = await startTestEmulator();
    try {
      const env2 = boardEnv(second);
      const refused = await runMain(['import', file, '--restart'], { env: env2, configDir: env2.CARDBOARD_CONFIG_DIR });
      expect(refused.code, refused.stderr).toBe(2);
      expect(second.requests().filter((r) => r.method === 'POST')).toEqual([]);
      // ...and with it, maps the same way without asking anything.
      const again = await runMain(['import', file, '--map-file', mapPath, '--restart'], { env: env2, configDir: env2.CARDBOARD_CONFIG_DIR });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).not.toMatch(/goes to which field|Create Fields on|Start the import/);
      expect(cardsOf(second)).toEqual(EXPECTED_CARDS);
    } finally {
      await second.close();
    }
  });

  it('Ctrl-C at a mapping question ends the run by SIGINT with "Interrupted.", never "a bug"; nothing is sent', async () => {
    emu = await startTestEmulator();
    const t = onTerminal(['import', writePeople()], boardEnv(emu));
    const cf = await t.waitFor('Does this board have Create Fields on');
    await t.waitFor('(y/N)', cf);
    t.type(ENTER);
    const asked = await t.waitFor('CSV column "status"', cf);
    await t.waitFor('skip this column', asked);
    t.type('\x03');
    // A key on the raw terminal, not a signal: the run ends by SIGINT all the same, so a loop stops.
    const end = await t.ended;
    const screen = plain(t.raw());
    expect(end, screen).toEqual({ code: null, signal: 'SIGINT' });
    expect(screen.slice(asked)).toContain('error: Interrupted.');
    expect(screen).not.toContain('This is a bug');
    expect(emu.requests().every((r) => r.method === 'GET')).toBe(true);
  });

  it('declining at the preview sends nothing and exits 130 (cancelled)', async () => {
    emu = await startTestEmulator();
    const file = writePeople();
    const t = onTerminal(['import', file], boardEnv(emu));
    const asked = await mapPeople(t);
    const start = await t.waitFor('Start the import with this mapping?', asked.at);
    await t.waitFor('(Y/n)', start);
    t.type(`n${ENTER}`);
    const code = await t.exit;
    const screen = plain(t.raw());
    expect(code, screen).toBe(130);
    expect(screen.slice(start)).toContain('error: Import cancelled at the preview; nothing was sent.');
    expect(screen).not.toContain('Save this mapping');
    const methods = emu.requests().map((r) => r.method);
    expect(methods.length).toBeGreaterThan(0);
    expect(methods.every((m) => m === 'GET')).toBe(true);
    expect(cardsOf(emu)).toEqual([]);
  });
});

/** A CSV of `n` rows whose headers are the board's own field names (nothing to ask). */
function writeRows(n: number): string {
  const lines = ['Name,Status,Owner,Priority'];
  for (let i = 1; i <= n; i++) lines.push(`row-${i},Open,owner-${i % 7},P${i % 3}`);
  const file = join(tempDir('cardboard-tty-'), 'rows.csv');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

// ora's dots spinner frames, and the cursor movements a live line needs (hide cursor, erase line, column).
const SPINNER = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/;
const CURSOR_CODES = /\x1b\[\?25l|\x1b\[2K|\x1b\[\d*G/;

describe('import progress on a terminal', () => {
  const N = 300;
  // One request at a time, each delayed 5 ms by the emulator: the run lasts at least 1.5 s, long enough to
  // type Ctrl-C while it runs. A run watched to its end has 100 rows delayed 10 ms each (at least 1 s).
  const FULL = 100;
  const args = (file: string) => ['import', file, '--concurrency', '1'];

  it('on a terminal: a live ora line with rows done and rows/s, then the final line and the summary table', async () => {
    emu = await startTestEmulator({ faults: 'delay:10ms' });
    const t = onTerminal(args(writeRows(FULL)), boardEnv(emu));
    const code = await t.exit;
    const raw = t.raw();
    const screen = plain(raw);
    expect(code, screen).toBe(0);
    expect(raw).toMatch(SPINNER);
    expect(raw).toMatch(CURSOR_CODES);
    // Every count the line showed: it starts at 0, moves while rows go out, and ends at the total.
    const counts = [...screen.matchAll(/Importing: (\d+) \/ 100 rows · \d+\.\d rows\/s/g)].map((m) => Number(m[1]));
    expect(counts[0]).toBe(0);
    expect(counts.some((c) => c > 0 && c < FULL), `counts shown: ${counts.join(',')}`).toBe(true);
    expect(screen).toMatch(/✔ Importing: 100 \/ 100 rows · \d+\.\d rows\/s · 0 retries · 0 waits \(429\)/);
    expect(screen).toMatch(/created {2,}100\b/);
    expect(emu.state()[BOARD_ID]!.cards).toHaveLength(FULL);
  });

  // With ora's live line running, one Ctrl-C typed on the terminal used to end the process
  // by the signal before any cleanup (no summary), while the same import piped stopped gracefully.
  it('Ctrl-C typed while the live line runs stops as piped: summary, then death by SIGINT; the re-run completes, every row once', async () => {
    emu = await startTestEmulator({ faults: 'delay:5ms' });
    const env = boardEnv(emu);
    const file = writeRows(N);
    const t = onTerminal(args(file), env);
    await t.waitFor(/Importing: [1-9]\d* \/ 300 rows/);
    t.type('\x03');
    const end = await t.ended;
    const screen = plain(t.raw());
    expect(end, screen).toEqual({ code: null, signal: 'SIGINT' });
    expect(screen).toMatch(/created {2,}\d+/);
    const done = Number(/error: Interrupted after (\d+) rows?\./.exec(screen)?.[1]);
    expect(done, screen).toBeGreaterThan(0);
    expect(done).toBeLessThan(N);
    expect(emu.state()[BOARD_ID]!.cards).toHaveLength(done);
    // The same command, not on a terminal this time, resumes from the journal the interrupted run wrote (run in
    // this process: the built binary piped is the next test's).
    const again = await runMain(args(file), { env, configDir: env.CARDBOARD_CONFIG_DIR });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`Resuming: ${done} row${done === 1 ? '' : 's'} already finished`);
    // Its progress starts at the rows already done, and says so.
    expect(again.stderr).toMatch(new RegExp(`^Importing: ${done} / 300 rows \\(resumed at ${done}\\) · `, 'm'));
    const names = emu.state()[BOARD_ID]!.cards.map((c) => c.Name);
    expect(names).toHaveLength(N);
    expect(new Set(names).size).toBe(N);
  });

  it('piped: the same run prints plain lines, no spinner frames and no cursor codes on stderr', async () => {
    emu = await startTestEmulator({ faults: 'delay:10ms' });
    const env = boardEnv(emu);
    // Everything as on the terminal (CI unset, TERM=xterm) except that stderr is a pipe.
    const r = await runCli(args(writeRows(FULL)), { env: { ...env, CI: undefined, TERM: 'xterm' }, configDir: env.CARDBOARD_CONFIG_DIR });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(SPINNER);
    expect(r.stderr).not.toMatch(/\x1b/);
    expect(r.stderr).toMatch(/^Importing: 0 \/ 100 rows/m);
    expect(r.stderr).toMatch(/^✔ Importing: 100 \/ 100 rows · \d+\.\d rows\/s/m);
    expect(r.stderr).toMatch(/^created\s+100$/m);
    expect(r.stdout).toBe('');
    expect(emu.state()[BOARD_ID]!.cards).toHaveLength(FULL);
  });
});
