// The import journal: append-only, one line per finished row, so a re-run after Ctrl-C, a crash or
// kill -9 skips what is done (issue 4, section 6). It belongs to one run (issue 10, point 1): keyed by
// the file's content hash, the board (base URL and id) and the plan (everything that changes what is
// sent), and deleted once a run reaches the end of its input, so the next run starts afresh.
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, mkdirSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { UsageError } from '../errors.js';
import { redactSecrets } from '../redact.js';
import { openPrivate, requireRegularFile } from '../private-file.js';
import type { ColumnMapping, FieldType, InputFormat, RowState } from './types.js';

/** What a journal belongs to. `sha256` is absent for stdin (no content hash before reading it). */
export interface JournalKey {
  sha256?: string;
  /** The board id. */
  board: string;
  /** The resolved base URL: the same board id on another server is another board. */
  baseUrl: string;
  /** planDigest() of the run. */
  plan: string;
}

/** What decides the bodies a run sends: a journal of another plan must never skip rows of this one. */
export interface PlanInputs {
  file: string;
  inputFormat?: InputFormat;
  delimiter?: string;
  encoding?: string;
  columns: ColumnMapping[];
  sendEmpty: boolean;
  types: Map<string, FieldType>;
  idColumn?: string;
  matchOn?: string;
}

/** A hex digest of a canonical JSON of the plan (arrays in a fixed order; no user string as a key). */
export function planDigest(p: PlanInputs): string {
  const target = (c: ColumnMapping) => (c.target.kind === 'field' || c.target.kind === 'new' ? `${c.target.kind}:${c.target.field}` : c.target.kind);
  const canonical = JSON.stringify([
    ['format', p.inputFormat ?? (extname(p.file).toLowerCase() || null)],
    ['delimiter', p.delimiter ?? null],
    ['encoding', p.encoding ?? null],
    ['columns', p.columns.map((c) => [c.header, target(c)])],
    ['sendEmpty', p.sendEmpty],
    ['types', [...p.types].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))],
    ['idColumn', p.idColumn ?? null],
    ['matchOn', p.matchOn ?? null],
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}

const safe = (s: string) => s.replace(/[^\w.-]/g, '_');

/** `<name>.<sha256 prefix>.<board id>.<base URL digest>`: the part of every file name shared by one input and board. */
export function journalStem(inputPath: string, key: Pick<JournalKey, 'sha256' | 'board' | 'baseUrl'>): string {
  const url = createHash('sha256').update(key.baseUrl).digest('hex').slice(0, 8);
  return `${inputPath === '-' ? 'stdin' : basename(inputPath)}.${key.sha256?.slice(0, 16) ?? 'stdin'}.${safe(key.board)}.${url}`;
}

/** The directory of default journals and of every lock: `.cardboard-journal/` next to the input. */
export function journalDir(inputPath: string): string {
  return join(dirname(inputPath), '.cardboard-journal');
}

/** Unfinished journals of the same input and board under another plan: named in a warning, never applied. */
export function otherPlanJournals(dir: string, stem: string, own: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => n.startsWith(`${stem}.`) && n.endsWith('.log')).map((n) => join(dir, n)).filter((p) => p !== own);
}

/** A row finished in an earlier run. */
export interface JournalEntry {
  state: RowState;
  id?: string;
}

const MAGIC = 'cardboard-import-journal';
const STATES = new Set<string>(['created', 'updated', 'rejected', 'uncertain']);

/** `<dir of input>/.cardboard-journal/<stem>.<plan prefix>.log`: one journal per content, board and plan. */
export function defaultJournalPath(inputPath: string, key: JournalKey): string {
  return join(journalDir(inputPath), `${journalStem(inputPath, key)}.${key.plan.slice(0, 12)}.log`);
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
    private readonly secrets: Iterable<string>,
  ) {
    this.fd = fd;
    this.previous = previous;
    // A timer flushes rows that finish while no new request is about to go out.
    this.timer = setInterval(() => this.flush(), 200);
    this.timer.unref();
  }

  /**
   * Open (or create, mode 0600) the journal at `path`; `restart` truncates it. A journal of another file or
   * board is refused. `secrets` (the token, the signing key) are redacted from every line written.
   */
  static async open(path: string, key: JournalKey, restart: boolean, secrets: Iterable<string> = []): Promise<Journal> {
    // Before reading it back: a FIFO would block the read, and a device cannot hold a journal.
    requireRegularFile(path, '--journal');
    mkdirSync(dirname(path), { recursive: true });
    const header = redactSecrets(secrets, JSON.stringify({ [MAGIC]: 2, sha256: key.sha256 ?? null, board: key.board, baseUrl: key.baseUrl, plan: key.plan }));
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
              throw new UsageError(`The journal ${path} belongs to another file, board or plan (mapping, types, id column, --match-on, --empty); it is not applied.`, {
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
    const fd = openPrivate(path, exists ? 'a' : 'w', { flag: '--journal', reread: true });
    // On append, a newline first: the last line may have been cut short by kill -9.
    writeSync(fd, exists ? '\n' : `${header}\n`);
    return new Journal(path, fd, previous, secrets);
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
    writeSync(this.fd, redactSecrets(this.secrets, this.pending.join('')));
    this.pending = [];
  }

  /** Close and delete: the run reached the end of its input, so the next run starts afresh. */
  discard(): void {
    this.close();
    rmSync(this.path, { force: true });
  }

  /** Flush and close. */
  close(): void {
    this.flush();
    if (this.timer) clearInterval(this.timer);
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
