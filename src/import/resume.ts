// What a resumed run does with each row, decided by content: the journal of earlier runs holds, per row,
// the digest of what was sent (journal.ts). A row whose digest an earlier record holds is that row, at
// whatever line it stands now (rows inserted above it, or removed, shift lines; stdin may bring the rows
// in another order). A row whose content no record holds is new, unless the record at its own line sent
// something else that may be on the board and no later row turns out to be that record's row: then the
// row was changed after it was sent, and re-sending it without a key would duplicate the card. A journal
// remembers several runs, perhaps of other data (stdin, a file replaced): a record counts against a row at
// its line only when the run that wrote it read this input (the same content hash) or a version of it
// (a row of this input claimed another of its records); else the line is a coincidence and the row is new.
import { holdsCard, type JournalEntry, mayLand } from './journal.js';

/** How far (in rows) a changed-looking row waits for a later row to claim its line's record (a shift). */
export const SHIFT_WINDOW = 1000;

/** What a row is, against the journal. */
export type Resumed =
  /** Sent and answered before: created or updated (skip it), or another outcome to act on again. */
  | { kind: 'known'; entry: JournalEntry }
  /** Content no record holds, and no record at its line that could be on the board. */
  | { kind: 'new' }
  /** Content no record holds, at the line of a record that may be on the board: decided later. */
  | { kind: 'pending'; decided: Promise<Verdict> };

/** The decision on a row that looked changed: a later row was the record's (so this one is new), or not. */
export type Verdict = { kind: 'new' } | { kind: 'changed'; entry: JournalEntry };

/** Whether a record's row may be a card on the board now: it holds one, or its try may have been applied. */
const onBoard = (e: JournalEntry): boolean => holdsCard(e) || mayLand(e);

interface Waiting {
  line: number;
  entries: JournalEntry[];
  resolve(v: Verdict): void;
  done: boolean;
}

/** The records of earlier runs, consumed as the rows of this run claim them. */
export class ResumeIndex {
  private readonly byDigest = new Map<string, JournalEntry[]>();
  private readonly byLine = new Map<number, JournalEntry[]>();
  private readonly claimed = new Set<JournalEntry>();
  /** Per digest, the index in its list before which every record is claimed. */
  private readonly cursor = new Map<string, number>();
  /** Rows waiting for a verdict, in input order (so the oldest are first). */
  private waiting: Waiting[] = [];
  private readonly waitingOn = new Map<JournalEntry, Waiting[]>();
  readonly size: number;

  /** Runs (Journal.runs indexes) some record of which a row of this input claimed: they read a version of it. */
  private readonly related = new Set<number>();

  /** `sameInput(run)`: whether that earlier run read this very content (its hash equals this input's). */
  constructor(
    entries: readonly JournalEntry[],
    private readonly sameInput: (run: number) => boolean = () => true,
  ) {
    this.size = entries.length;
    const sorted = [...entries].sort((a, b) => a.line - b.line);
    for (const entry of sorted) {
      const sameDigest = this.byDigest.get(entry.digest);
      if (sameDigest) sameDigest.push(entry);
      else this.byDigest.set(entry.digest, [entry]);
      const l = this.byLine.get(entry.line);
      if (l) l.push(entry);
      else this.byLine.set(entry.line, [entry]);
    }
  }

  /** Match the row at `line` with content `digest`; called in input order. */
  match(line: number, digest: string): Resumed {
    const same = this.byDigest.get(digest);
    if (same) {
      // The record of its own line first, else the earliest unclaimed one (the rows shifted). The list is
      // in line order and claimed from its front as a rule: a cursor skips the claimed ones, so a file of
      // many identical rows costs no search per row.
      const own = this.byLine.get(line)?.find((e) => e.digest === digest && !this.claimed.has(e));
      let entry = own;
      if (entry === undefined) {
        let at = this.cursor.get(digest) ?? 0;
        while (at < same.length && this.claimed.has(same[at]!)) at++;
        this.cursor.set(digest, at);
        entry = same[at];
      }
      if (entry) {
        this.claim(entry);
        return { kind: 'known', entry };
      }
    }
    const here = (this.byLine.get(line) ?? []).filter((e) => onBoard(e) && !this.claimed.has(e));
    if (here.length === 0) return { kind: 'new' };
    return {
      kind: 'pending',
      decided: new Promise<Verdict>((resolve) => {
        const waiting: Waiting = { line, entries: here, resolve, done: false };
        this.waiting.push(waiting);
        for (const entry of here) {
          const list = this.waitingOn.get(entry);
          if (list) list.push(waiting);
          else this.waitingOn.set(entry, [waiting]);
        }
      }),
    };
  }

  /** The reader reached `line`: rows that waited a whole window without a shift showing are changed. */
  advance(line: number): void {
    let i = 0;
    while (i < this.waiting.length && this.waiting[i]!.line <= line - SHIFT_WINDOW) this.decide(this.waiting[i++]!);
    if (i > 0) this.waiting = this.waiting.slice(i);
  }

  /** The input ended: every row still waiting is decided. */
  end(): void {
    const all = this.waiting;
    this.waiting = [];
    for (const w of all) this.decide(w);
  }

  private decide(waiting: Waiting): void {
    if (waiting.done) return;
    waiting.done = true;
    for (const e of waiting.entries) this.waitingOn.delete(e);
    const left = waiting.entries.find((e) => !this.claimed.has(e) && (this.related.has(e.run) || this.sameInput(e.run)));
    waiting.resolve(left ? { kind: 'changed', entry: left } : { kind: 'new' });
  }

  private claim(entry: JournalEntry): void {
    this.claimed.add(entry);
    this.related.add(entry.run);
    // A row waiting on this record's line is new once every record there is claimed by other rows.
    for (const w of this.waitingOn.get(entry) ?? []) if (w.entries.every((e) => this.claimed.has(e))) this.decide(w);
  }
}
