// The import journal: append-only, one line per finished row, so a re-run after Ctrl-C, a crash or
// kill -9 skips what is done (issue 4, section 6). Keyed by the file's content hash and the board:
// a changed file or another board never reuses an old journal.
import { closeSync, createReadStream, mkdirSync, openSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { UsageError } from '../errors.js';
import type { RowState } from './types.js';

/** What a journal belongs to. `sha256` is absent for stdin (no content hash before reading it). */
export interface JournalKey {
  sha256?: string;
  board: string;
}

/** A row finished in an earlier run. */
export interface JournalEntry {
  state: RowState;
  id?: string;
}

const MAGIC = 'cardboard-import-journal';
const STATES = new Set<string>(['created', 'updated', 'rejected', 'uncertain']);

/** `<dir of input>/.cardboard-journal/<name>.<sha256 prefix>.<board>.log`: one journal per content and board. */
export function defaultJournalPath(inputPath: string, key: JournalKey): string {
  const board = key.board.replace(/[^\w.-]/g, '_');
  return join(dirname(inputPath), '.cardboard-journal', `${basename(inputPath)}.${key.sha256?.slice(0, 16)}.${board}.log`);
}

/** An open journal: the rows done before, and an append-only writer flushed in small batches. */
export class Journal {
  private pending: string[] = [];
  private fd: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private gate: Promise<void> | undefined;
  /** Rows finished in earlier runs, by starting line number. */
  readonly previous: Map<number, JournalEntry>;

  private constructor(
    readonly path: string,
    fd: number,
    previous: Map<number, JournalEntry>,
  ) {
    this.fd = fd;
    this.previous = previous;
    // A timer flushes rows that finish while no new request is about to go out.
    this.timer = setInterval(() => this.flush(), 200);
    this.timer.unref();
  }

  /** Open (or create) the journal at `path`; `restart` truncates it. A journal of another file or board is refused. */
  static async open(path: string, key: JournalKey, restart: boolean): Promise<Journal> {
    mkdirSync(dirname(path), { recursive: true });
    const header = JSON.stringify({ [MAGIC]: 1, sha256: key.sha256 ?? null, board: key.board });
    const previous = new Map<number, JournalEntry>();
    let exists = false;
    if (!restart) {
      try {
        // Streamed line by line: a journal of a million rows must not be read into one string.
        const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Number.POSITIVE_INFINITY });
        for await (const line of lines) {
          if (!exists) {
            exists = true;
            if (line !== header) {
              throw new UsageError(`The journal ${path} belongs to another file or board.`, {
                hint: 'Pass --restart to start it afresh, or --journal with another path.',
              });
            }
            continue;
          }
          // A line cut short by kill -9 has fewer than three fields or an unknown state: ignored.
          const [n, state, id] = line.split('\t');
          if (id === undefined || !STATES.has(state!) || !/^\d+$/.test(n!)) continue;
          previous.set(Number(n), id === '' ? { state: state as RowState } : { state: state as RowState, id });
        }
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
    const fd = openSync(path, exists ? 'a' : 'w', 0o600);
    // On append, a newline first: the last line may have been cut short by kill -9.
    writeSync(fd, exists ? '\n' : `${header}\n`);
    return new Journal(path, fd, previous);
  }

  /** Record a finished row; written at the next flush. */
  record(line: number, state: RowState, id?: string): void {
    this.pending.push(`${line}\t${state}\t${id ?? ''}\n`);
    if (this.pending.length >= 1024) this.flush();
  }

  /**
   * What a request must wait for before it leaves: undefined when every finished row is written, else a
   * promise of one write, made after the current turn of the event loop (setImmediate), of every row that
   * finished meanwhile. Rows finishing on several sockets in one turn cost one write instead of one each,
   * and still no request leaves while a finished row is unwritten: after kill -9 the rows sent but not
   * journalled are at most the ones in flight (issue 4, section 6).
   */
  ready(): Promise<void> | undefined {
    if (this.pending.length === 0 || this.fd === undefined) return undefined;
    this.gate ??= new Promise<void>((resolve) =>
      setImmediate(() => {
        this.gate = undefined;
        this.flush();
        resolve();
      }),
    );
    return this.gate;
  }

  /** Write what is pending now (the timer, the end of a run, and ready()). */
  flush(): void {
    if (this.pending.length === 0 || this.fd === undefined) return;
    // writeSync: the data is in the OS once this returns, so it survives kill -9 of this process.
    writeSync(this.fd, this.pending.join(''));
    this.pending = [];
  }

  /** Flush and close. */
  close(): void {
    this.flush();
    if (this.timer) clearInterval(this.timer);
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
