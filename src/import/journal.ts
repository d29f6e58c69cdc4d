// The import journal: append-only, so a re-run after Ctrl-C, a crash or kill -9 knows what each row did.
// A row is known by its content, not its line: each record holds the digest of the body that was sent
// (rowDigest), and the line only says where the row stood when it was first journalled. Before a row's
// first try leaves, a `sending` record is written (write-ahead): a row in flight at kill -9 is known to
// have maybe been applied, and the next run settles it by reading the board (resume.ts, recheck.ts)
// instead of sending it blindly again. One journal per board and input path; a run that reaches the end
// of its input deletes it, so the next run starts afresh.
import { createHash, hash } from 'node:crypto';
import { closeSync, createReadStream, mkdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { UsageError } from '../errors.js';
import { redactSecrets } from '../redact.js';
import { openPrivate, requireRegularFile } from '../private-file.js';
import { canonicalJson } from './match-index.js';
import type { ImportPlan } from './plan.js';
import type { ColumnMapping, RowState } from './types.js';

/** What a journal belongs to: one board on one server. The rest of its header is what a resume reports. */
export interface JournalKey {
  /** The board id. */
  board: string;
  /** The resolved base URL: the same board id on another server is another board. */
  baseUrl: string;
  /** The input as given (`-` for stdin). */
  input: string;
  /** The input's content hash, when it was hashed before reading (a file; not stdin). */
  sha256?: string;
  /** planDigest() of the run. */
  plan: string;
}

/** The header of a journal found on open: who wrote it first, and when. */
export interface JournalHeader extends JournalKey {
  started: string;
}

/**
 * A hex digest of what decides the bodies a run sends (the plan's source, mapping as resolved, types and
 * key; named when a journal written under another plan is applied): a canonical JSON, arrays in a fixed
 * order, no user string as a key.
 */
export function planDigest(plan: Pick<ImportPlan, 'source' | 'key' | 'types' | 'policy'>, columns: readonly ColumnMapping[]): string {
  const { source, key } = plan;
  const target = (c: ColumnMapping) => (c.target.kind === 'field' || c.target.kind === 'new' ? `${c.target.kind}:${c.target.field}` : c.target.kind);
  const canonical = JSON.stringify([
    ['format', source.formatGiven ?? (extname(source.file).toLowerCase() || null)],
    ['delimiter', source.delimiter ?? null],
    ['encoding', source.encoding ?? null],
    ['columns', columns.map((c) => [c.header, target(c)])],
    ['sendEmpty', plan.policy.sendEmpty],
    ['types', [...plan.types].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))],
    ['idColumn', key.idColumn ?? null],
    ['matchOn', key.matchOn ?? null],
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}

/**
 * The keys of `o` in the order of `Array.prototype.sort()` (UTF-16 code units). A row's few keys are sorted
 * in place by insertion: sort() would build its work arrays for every row of an import.
 */
function sortedKeys(o: object): string[] {
  const keys = Object.keys(o);
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > k; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = k;
  }
  return keys;
}

/**
 * The digest of what a row sends (16 hex digits, 64 bits): its body as canonical JSON, `_id` included
 * only when the row itself carries it (an `_id` found by --match-on is the board's, not the row's).
 */
export function rowDigest(body: Readonly<Record<string, unknown>>, idFromIndex: boolean): string {
  const keys = sortedKeys(body);
  let scalars = true;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const v = body[k];
    if (k === '_id' && idFromIndex) keys.splice(i--, 1);
    else if (!(v === undefined || v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')) scalars = false;
  }
  // canonicalJson's text for an object: with only scalar values (every CSV row), JSON.stringify given the
  // sorted keys writes it in one native call, in the keys' order and skipping undefined as canonicalJson
  // does. A value that is an object or array needs its own keys sorted: canonicalJson, one by one.
  if (scalars) return hash('sha1', JSON.stringify(body, keys), 'hex').slice(0, 16);
  let text = '{';
  for (const k of keys) {
    const v = body[k];
    if (v === undefined) continue;
    if (text.length > 1) text += ',';
    text += `${JSON.stringify(k)}:${canonicalJson(v)}`;
  }
  return hash('sha1', `${text}}`, 'hex').slice(0, 16);
}

const safe = (s: string) => s.replace(/[^\w.-]/g, '_');

/** `.cardboard-journal/<name>.<board id>.<base URL digest>.<input path digest>.log` next to the input. */
export function defaultJournalPath(inputPath: string, key: Pick<JournalKey, 'board' | 'baseUrl'>): string {
  const url = createHash('sha256').update(key.baseUrl).digest('hex').slice(0, 8);
  // The input's full path is part of the name: two files called data.csv in one directory tree differ.
  const where = createHash('sha256').update(resolve(inputPath)).digest('hex').slice(0, 8);
  return join(dirname(inputPath), '.cardboard-journal', `${basename(inputPath)}.${safe(key.board)}.${url}.${where}.log`);
}

/** A row journalled by a run: where it stood then (`line`), what it sent (`digest`), how it ended. */
export interface JournalEntry {
  line: number;
  digest: string;
  /**
   * `sending`: its first try was about to leave, and no outcome was written (kill -9). `unsent`: the run
   * stopped before that try left (Ctrl-C in a wait, the service away), so nothing of it was applied.
   */
  state: RowState | 'sending' | 'unsent';
  id?: string;
}

const MAGIC = 'cardboard-import-journal';
const VERSION = 3;
const STATES = new Set<string>(['created', 'updated', 'unchanged', 'rejected', 'uncertain', 'sending', 'unsent']);

/** An open journal: the rows of earlier runs, and an append-only writer flushed in small batches. */
export class Journal {
  private pending: string[] = [];
  private fd: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private gate: Promise<void> | undefined;

  private constructor(
    readonly path: string,
    fd: number,
    /** Rows journalled by earlier runs, the last record of each (line, digest) in file order. */
    readonly previous: JournalEntry[],
    /** The header of the journal as found (undefined: created by this run). */
    readonly found: JournalHeader | undefined,
    private readonly secrets: Iterable<string>,
    /** When the journal found was last written (ms since the epoch): when its run ended, at the latest. */
    readonly lastWritten: number | undefined,
  ) {
    this.fd = fd;
    // A timer flushes rows that finish while no new request is about to go out.
    this.timer = setInterval(() => this.flush(), 200);
    this.timer.unref();
  }

  /**
   * Open (or create, mode 0600) the journal at `path`; `restart` truncates it. A journal of another board
   * or server, or not a journal of this version, is refused. `secrets` (the token, the signing key) are
   * redacted from every line written.
   */
  static async open(path: string, key: JournalKey, restart: boolean, secrets: Iterable<string> = [], now = new Date()): Promise<Journal> {
    // Before reading it back: a FIFO would block the read, and a device cannot hold a journal.
    requireRegularFile(path, '--journal');
    mkdirSync(dirname(path), { recursive: true });
    const header: JournalHeader = { ...key, started: now.toISOString() };
    const byKey = new Map<string, JournalEntry>();
    let found: JournalHeader | undefined;
    let exists = false;
    if (!restart) {
      try {
        // Streamed line by line: a journal of a million rows must not be read into one string.
        const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Number.POSITIVE_INFINITY });
        for await (const line of lines) {
          if (!exists) {
            exists = true;
            found = readHeader(line, path);
            if (found.board !== key.board || found.baseUrl !== key.baseUrl) {
              throw new UsageError(`The journal ${path} belongs to board ${found.board} at ${found.baseUrl}; it is not applied to this board.`, {
                hint: 'Pass --journal with another path (or --restart to start this one afresh).',
              });
            }
            continue;
          }
          // A line cut short by kill -9 has fewer fields or an unknown state: ignored.
          const [n, state, id, digest] = line.split('\t');
          if (digest === undefined || !/^[0-9a-f]{16}$/.test(digest) || !STATES.has(state!) || !/^\d+$/.test(n!)) continue;
          const entry: JournalEntry = { line: Number(n), digest, state: state as JournalEntry['state'] };
          if (id !== '') entry.id = id;
          // The later record of a row wins: `sending`, then its outcome; a resumed run's outcome after that.
          const k = `${n}\t${digest}`;
          byKey.delete(k);
          byKey.set(k, entry);
        }
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
    let lastWritten: number | undefined;
    if (exists) {
      try {
        lastWritten = statSync(path).mtimeMs;
      } catch {
        // gone meanwhile: treated as just written
      }
    }
    const fd = openPrivate(path, exists ? 'a' : 'w', { flag: '--journal', reread: true });
    // On append, a newline first: the last line may have been cut short by kill -9.
    writeSync(fd, exists ? '\n' : `${redactSecrets(secrets, JSON.stringify({ [MAGIC]: VERSION, ...header }))}\n`);
    return new Journal(path, fd, [...byKey.values()], found, secrets, lastWritten);
  }

  /** Record that a row's first try is about to leave; written before it does (see ready()). */
  sending(line: number, digest: string): void {
    this.pending.push(`${line}\tsending\t\t${digest}\n`);
  }

  /** Record that a row's try never left after all (its `sending` record stands for nothing). */
  unsent(line: number, digest: string): void {
    this.pending.push(`${line}\tunsent\t\t${digest}\n`);
  }

  /** Record a finished row; written at the next flush. */
  record(line: number, digest: string, state: RowState, id?: string): void {
    this.pending.push(`${line}\t${state}\t${id ?? ''}\t${digest}\n`);
    if (this.pending.length >= 1024) this.flush();
  }

  /**
   * What a request must wait for before it leaves: undefined when every record is written, else a promise
   * of one write, made after the current turn of the event loop (setImmediate), of every record made
   * meanwhile. Rows starting or finishing on several sockets in one turn cost one write instead of one
   * each, and no request leaves before its `sending` record is in the file: after kill -9 every row that
   * may have been applied is known.
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

/** The first line of a journal, or a UsageError: not a journal, or one of an older version. */
function readHeader(line: string, path: string): JournalHeader {
  let h: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(line);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) h = parsed as Record<string, unknown>;
  } catch {
    // not JSON: refused below
  }
  if (h === undefined || !Object.hasOwn(h, MAGIC)) {
    throw new UsageError(`${path} is not an import journal; it is not applied.`, { hint: 'Pass --journal with another path, or --restart to overwrite it.' });
  }
  if (h[MAGIC] !== VERSION || typeof h.board !== 'string' || typeof h.baseUrl !== 'string') {
    throw new UsageError(`The journal ${path} was written by another version of cardboard; it is not applied.`, {
      hint: 'Check the board for the rows it sent, then pass --restart to start afresh.',
    });
  }
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const out: JournalHeader = { board: h.board, baseUrl: h.baseUrl, input: text(h.input) ?? '?', plan: text(h.plan) ?? '', started: text(h.started) ?? '?' };
  const sha = text(h.sha256);
  if (sha !== undefined) out.sha256 = sha;
  return out;
}
