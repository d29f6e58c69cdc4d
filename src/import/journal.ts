// The import journal: append-only, so a later run knows what each row did, after Ctrl-C, a crash, kill -9
// or a run that finished. A row is known by its content, not its line: each record holds the digest of
// the body that was sent (rowDigest), and the line only says where the row stood when it was first
// journalled. Before a row's first try leaves (and before each retry), a `sending` record is written
// (write-ahead): a row in flight at kill -9 is known to have maybe been applied, and the next run settles
// it by reading the board (resume.ts, recheck.ts) instead of sending it blindly again. A run that
// finishes keeps its journal: it is the memory of what was imported into the board, so the same input
// run again sends nothing. Nothing is ever deleted from it: `--again` and `--restart` append a line that
// makes later runs forget records (finished ones, or all), and the card ids of every record stay known.
import { createHash, hash } from 'node:crypto';
import { closeSync, createReadStream, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Clock } from '../clock.js';
import { UsageError } from '../errors.js';
import { redactSecrets } from '../redact.js';
import { makePrivateDir, openPrivate, requireRegularFile } from '../private-file.js';
import { canonicalJson } from './match-index.js';
import type { ImportPlan } from './plan.js';
import type { ColumnMapping, RowState } from './types.js';

/** What a journal belongs to: one board on one server. The rest of its header is what a resume reports. */
export interface JournalKey {
  /** The board id. */
  board: string;
  /** The resolved base URL, as spelled: reported, not compared (see server). */
  baseUrl: string;
  /** What names the server whatever its spelling (board-lock.ts serverIdentity): the same board id on another server is another board. */
  server: string;
  /** The input as given (`-` for stdin). */
  input: string;
  /** The input's content hash, when it was hashed before reading (a file; not stdin). */
  sha256?: string;
  /** planDigest() of the run. */
  plan: string;
}

/** The header of a journal found on open: who wrote it first, and when (a journal of an older version names no server). */
interface JournalHeader extends Omit<JournalKey, 'server'> {
  server?: string;
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
 * The keys of `value` in the order of `Array.prototype.sort()` (UTF-16 code units). A row's few keys are sorted
 * in place by insertion: sort() would build its work arrays for every row of an import.
 */
function sortedKeys(value: object): string[] {
  const keys = Object.keys(value);
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > key; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = key;
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
    const key = keys[i]!;
    const v = body[key];
    if (key === '_id' && idFromIndex) keys.splice(i--, 1);
    else if (!(v === undefined || v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')) scalars = false;
  }
  // canonicalJson's text for an object: with only scalar values (every CSV row), JSON.stringify given the
  // sorted keys writes it in one native call, in the keys' order and skipping undefined as canonicalJson
  // does. A value that is an object or array needs its own keys sorted: canonicalJson, one by one.
  if (scalars) return hash('sha1', JSON.stringify(body, keys), 'hex').slice(0, 16);
  let text = '{';
  for (const k of keys) {
    const value = body[k];
    if (value === undefined) continue;
    if (text.length > 1) text += ',';
    text += `${JSON.stringify(k)}:${canonicalJson(value)}`;
  }
  return hash('sha1', `${text}}`, 'hex').slice(0, 16);
}

const safe = (s: string) => s.replace(/[^\w.-]/g, '_');

/** `.cardboard-journal/<name>.<board id>.<server digest>.<input path digest>.log` next to the input. */
export function defaultJournalPath(inputPath: string, key: Pick<JournalKey, 'board' | 'server'>): string {
  // The server as identified, not as spelled: localhost and 127.0.0.1 find one journal.
  const url = createHash('sha256').update(key.server).digest('hex').slice(0, 8);
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
  /** The run that wrote it (an index into Journal.runs). */
  run: number;
}

/** One run that opened the journal: when, and how long its requests could take (--timeout). */
interface JournalRun {
  at: string;
  /** The content hash of the input it read (a file; none for stdin). */
  sha256?: string;
  timeoutMs?: number;
  /** It read its input to the end (it was not cut off). */
  complete?: boolean;
}

/** What a run makes later runs forget: rows finished (--again, a board found emptied) or every record (--restart). */
type Forget = 'finished' | 'all';

/** How a run opens its journal. */
interface JournalOpen {
  /** Forget records of earlier runs: written to the journal, so later runs forget them too. */
  forget?: Forget;
  /** This run's request timeout: a later run waits this long after a kill for requests in flight to land. */
  timeoutMs: number;
  /** The run's clock: the time of this run's records, and the wait before a batch of them is written. */
  clock: Clock;
  /**
   * Asked, before anything is written and unless something is forgotten anyway, whether the cards the
   * records remember (rows finished, imported at `at`) are gone from the board: then they are forgotten
   * as by --again, and the rows sent again.
   */
  stale?: (entries: readonly JournalEntry[], at: string | undefined, lastRunComplete: boolean) => Promise<boolean>;
  /**
   * Where the cards of finished rows must be stored before their records are written (a --mirror run's
   * mirror, import/mirror-writes.ts): records of finished rows then wait for the scheduled write (FLUSH_MS),
   * not the write before each request, so one `save()` stores the cards of many rows. `save()` says whether it
   * stored them (it must not throw); records whose cards it could not store are never written: the next run
   * reads the board for those rows, as for rows in flight at a kill.
   */
  outcomes?: { save(): boolean };
}

/** States whose rows may be a card on the board that no run has settled: no forgetting but --restart drops them. */
const UNSETTLED = new Set<JournalEntry['state']>(['sending', 'uncertain']);
/** States whose record names a card a run of this import made, updated or found. */
const CARD_STATES = new Set<JournalEntry['state']>(['created', 'updated', 'found']);

/** Whether a record's row ended with its card on the board (created, updated or found): a later run skips it. */
export function holdsCard(e: Pick<JournalEntry, 'state'>): boolean {
  return CARD_STATES.has(e.state);
}

/** Whether a record's try may have been applied and may still be landing (in flight at a kill, or cut off): a later run reads the board for it. */
export function mayLand(e: Pick<JournalEntry, 'state'>): boolean {
  return UNSETTLED.has(e.state);
}

const MAGIC = 'cardboard-import-journal';
const VERSION = 3;
const STATES = new Set<string>(['created', 'updated', 'found', 'unchanged', 'rejected', 'uncertain', 'sending', 'unsent']);

/** What a reading of the journal found: its header, runs, the records that count, and every card id. */
interface Reading {
  header: JournalHeader | undefined;
  /** Whether the file existed with any content (an empty file is taken as a new journal). */
  exists: boolean;
  runs: JournalRun[];
  entries: Map<string, JournalEntry>;
  ids: Set<string>;
}

/** How long a record made while no request is about to go out waits before it is written. */
const FLUSH_MS = 200;

/** An open journal: the rows of earlier runs, and an append-only writer flushed in small batches. */
export class Journal {
  private pending: string[] = [];
  /** With `outcomes`: records of finished rows, written only once their cards are stored (see JournalOpen). */
  private held: string[] = [];
  private fd: number | undefined;
  /** A write is scheduled FLUSH_MS after the first record made since the last write (see push). */
  private flushDue = false;
  /** Ends the wait of a scheduled write when the journal closes, so no timer outlives it. */
  private readonly closing = new AbortController();
  private gate: Promise<void> | undefined;

  private constructor(
    readonly path: string,
    fd: number,
    /** Rows journalled by earlier runs and not forgotten, the last record of each (line, digest) in file order. */
    readonly previous: JournalEntry[],
    /** The header of the journal as found (undefined: created by this run). */
    readonly found: JournalHeader | undefined,
    private readonly secrets: Iterable<string>,
    /** When the journal found was last written (ms since the epoch): when its run ended, at the latest. */
    readonly lastWritten: number | undefined,
    /** Earlier runs, in order (the last one is the run a kill may have cut off). */
    readonly runs: readonly JournalRun[],
    /** Every card id a record of any earlier run names, forgotten ones included: no content match takes them. */
    readonly knownIds: ReadonlySet<string>,
    /** Whether this run created the file (only then may it delete it). */
    private readonly created: boolean,
    /** This run's input content hash (none for stdin). */
    private readonly sha256: string | undefined,
    private readonly clock: Clock,
    private readonly outcomes: { save(): boolean } | undefined,
  ) {
    this.fd = fd;
  }

  /**
   * Open the journal at `path`, or create it owner-only (its directory too, when absent). A file that is
   * not a journal is refused, whatever the options (it is not cardboard's to overwrite); so is a journal of
   * another board or server. A journal of another version is started afresh only with `forget: 'all'`
   * (--restart). `secrets` (the token, the signing key) are redacted from every line written.
   */
  static async open(path: string, key: JournalKey, how: JournalOpen, secrets: Iterable<string> = []): Promise<Journal> {
    // Before reading it back: a FIFO would block the read, and a device cannot hold a journal.
    requireRegularFile(path, '--journal');
    makePrivateDir(dirname(path));
    const reading = await readJournal(path, key, how.forget === 'all');
    let lastWritten: number | undefined;
    if (reading.header !== undefined) {
      try {
        lastWritten = statSync(path).mtimeMs;
      } catch {
        // gone meanwhile: treated as just written
      }
    }
    let forgets = how.forget;
    if (forgets === undefined && how.stale !== undefined && reading.header !== undefined) {
      const all = [...reading.entries.values()];
      if (all.some((e) => CARD_STATES.has(e.state)) && (await how.stale(all, lastImport(all, reading.runs), reading.runs.at(-1)?.complete === true))) forgets = 'finished';
    }
    const earlier = forget([...reading.entries.values()], forgets);
    let fresh = false;
    try {
      statSync(path);
    } catch {
      fresh = true;
    }
    const fd = openPrivate(path, reading.header === undefined ? 'w' : 'a', { flag: '--journal', reread: true });
    const header: JournalHeader = { ...key, started: new Date(how.clock.now()).toISOString() };
    const lines: string[] = [];
    // On append, a newline first: the last line may have been cut short by kill -9.
    if (reading.header === undefined) lines.push(JSON.stringify({ [MAGIC]: VERSION, ...header }));
    else lines.push('');
    if (forgets !== undefined && reading.header !== undefined) lines.push(JSON.stringify({ forget: forgets, at: header.started }));
    lines.push(JSON.stringify({ run: header.started, timeoutMs: how.timeoutMs, sha256: key.sha256 }));
    writeSync(fd, `${redactSecrets(secrets, lines.join('\n'))}\n`);
    return new Journal(path, fd, earlier, reading.header, secrets, lastWritten, reading.runs, reading.ids, fresh, key.sha256, how.clock, how.outcomes);
  }

  /** Record that a row's first try is about to leave; written before it does (see ready()). */
  sending(line: number, digest: string): void {
    this.push(`${line}\tsending\t\t${digest}\n`);
  }

  /** Record that a row's try never left after all (its `sending` record stands for nothing). */
  unsent(line: number, digest: string): void {
    this.push(`${line}\tunsent\t\t${digest}\n`);
  }

  /** Record that this run read its input to the end: a later run is a re-run, not a resume. */
  complete(): void {
    this.push(`${JSON.stringify({ complete: new Date(this.clock.now()).toISOString() })}\n`);
  }

  /** Whether the earlier run `run` read the very content this run reads (both hashed, and equal). */
  sameContent(run: number): boolean {
    return this.sha256 !== undefined && this.runs[run]?.sha256 === this.sha256;
  }

  /** Whether the last earlier run read its input to the end. */
  lastRunComplete(): boolean {
    return this.runs.at(-1)?.complete === true;
  }

  /** Record a finished row; written at the next flush. */
  record(line: number, digest: string, state: RowState, id?: string): void {
    this.push(`${line}\t${state}\t${id ?? ''}\t${digest}\n`, this.outcomes !== undefined);
    if (this.pending.length + this.held.length >= 1024) this.flush();
  }

  /**
   * Queue a record. Rows that finish while no new request is about to go out (the last ones, or during a
   * wait for a rate limit) are written FLUSH_MS later by the run's clock, with every record made meanwhile.
   */
  private push(line: string, held = false): void {
    (held ? this.held : this.pending).push(line);
    if (this.flushDue || this.fd === undefined) return;
    this.flushDue = true;
    void this.clock.sleep(FLUSH_MS, this.closing.signal).then(() => {
      this.flushDue = false;
      this.flush();
    });
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
        this.flush(false);
        resolve();
      }),
    );
    return this.gate;
  }

  /**
   * Write what is pending now (the scheduled write, the end of a run, and ready()); `held`: the records
   * waiting for their cards to be stored too (not before each request: see JournalOpen.outcomes).
   */
  flush(held = true): void {
    if (this.fd === undefined) return;
    let text = '';
    if (held && this.held.length > 0) {
      // Their `sending` records are in the file already (written before each try left): these come after.
      if (this.outcomes!.save()) text = this.held.join('');
      this.held = [];
    }
    if (this.pending.length === 0 && text === '') return;
    // writeSync: the data is in the OS once this returns, so it survives kill -9 of this process.
    writeSync(this.fd, redactSecrets(this.secrets, text + this.pending.join('')));
    this.pending = [];
  }

  /** Close, and delete the file if this run created it: nothing was sent, so it holds nothing to remember. */
  discard(): void {
    this.close();
    if (this.created) rmSync(this.path, { force: true });
  }

  /** When the rows an earlier run finished were imported: the start of the last run that made, updated or found a card. */
  lastImportAt(): string | undefined {
    return lastImport(this.previous, this.runs);
  }

  /**
   * When the last request of an earlier run that may still be landing (a row in flight at a kill, or cut
   * off and uncertain) can land at the latest (ms since the epoch): for each such row, the end of the run
   * that sent it (the start of the next run, or the journal's last write for the last one) plus that run's
   * own request timeout (`defaultTimeoutMs` when it did not say). Undefined when no row may be landing.
   */
  landsBy(defaultTimeoutMs: number): number | undefined {
    let latest: number | undefined;
    for (const entry of this.previous) {
      if (!UNSETTLED.has(entry.state)) continue;
      const next = this.runs[entry.run + 1];
      const ended = next === undefined ? this.lastWritten : Date.parse(next.at);
      if (ended === undefined || Number.isNaN(ended)) continue;
      const at = ended + (this.runs[entry.run]?.timeoutMs ?? defaultTimeoutMs);
      if (latest === undefined || at > latest) latest = at;
    }
    return latest;
  }

  /** Flush and close. */
  close(): void {
    this.flush();
    this.closing.abort();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/** The start of the last run that made, updated or found a card among `entries`. */
function lastImport(entries: readonly JournalEntry[], runs: readonly JournalRun[]): string | undefined {
  let last = -1;
  for (const e of entries) if (CARD_STATES.has(e.state) && e.run > last) last = e.run;
  return runs[last]?.at;
}

/** The records left once `how` is forgotten: `finished` keeps only rows that may be on the board unsettled. */
function forget(entries: JournalEntry[], how: Forget | undefined): JournalEntry[] {
  if (how === 'all') return [];
  return how === 'finished' ? entries.filter((e) => UNSETTLED.has(e.state)) : entries;
}

/**
 * Read the journal at `path`, streamed line by line (a journal of a million rows must not be read into
 * one string). An absent or empty file is a new journal; any other file must start with a journal header.
 * `restart`: a journal of another version (that cardboard wrote) is taken as a new one.
 */
async function readJournal(path: string, key: JournalKey, restart: boolean): Promise<Reading> {
  const reading: Reading = { header: undefined, exists: false, runs: [], entries: new Map(), ids: new Set() };
  try {
    const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Number.POSITIVE_INFINITY });
    for await (const line of lines) {
      if (!reading.exists) {
        reading.exists = true;
        const header = readHeader(line, path, restart);
        if (header === undefined) return { ...reading, exists: true };
        reading.header = header;
        const sameServer = header.server === undefined ? header.baseUrl === key.baseUrl : header.server === key.server;
        if (header.board !== key.board || !sameServer) {
          throw new UsageError(`The journal ${path} belongs to board ${header.board} at ${header.baseUrl}; it is not applied to this board.`, {
            hint: 'Pass --journal with another path: a journal remembers the imports into one board.',
          });
        }
        continue;
      }
      if (line.startsWith('{')) {
        readMeta(line, reading);
        continue;
      }
      // A line cut short by kill -9 has fewer fields or an unknown state: ignored.
      const [lineNo, state, id, digest] = line.split('\t');
      if (digest === undefined || !/^[0-9a-f]{16}$/.test(digest) || !STATES.has(state!) || !/^\d+$/.test(lineNo!)) continue;
      // A journal of an older release names no runs: its header stands for the run that wrote it.
      if (reading.runs.length === 0) reading.runs.push(reading.header!.sha256 === undefined ? { at: reading.header!.started } : { at: reading.header!.started, sha256: reading.header!.sha256 });
      const entry: JournalEntry = { line: Number(lineNo), digest, state: state as JournalEntry['state'], run: reading.runs.length - 1 };
      if (id !== '') {
        entry.id = id;
        if (CARD_STATES.has(entry.state)) reading.ids.add(id!);
      }
      // The later record of a row wins: `sending`, then its outcome; a resumed run's outcome after that.
      const k = `${lineNo}\t${digest}`;
      reading.entries.delete(k);
      reading.entries.set(k, entry);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return reading;
}

/** A run's line (`{"run": …, "timeoutMs": …}`) or a forget line (`{"forget": "finished"|"all"}`); anything else is ignored. */
function readMeta(line: string, reading: Reading): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return; // cut short by kill -9
  }
  if (parsed === null || typeof parsed !== 'object') return;
  const meta = parsed as Record<string, unknown>;
  if (typeof meta.complete === 'string') {
    const last = reading.runs.at(-1);
    if (last) last.complete = true;
  } else if (typeof meta.run === 'string') {
    const run: JournalRun = { at: meta.run };
    if (typeof meta.sha256 === 'string') run.sha256 = meta.sha256;
    if (typeof meta.timeoutMs === 'number' && meta.timeoutMs >= 0) run.timeoutMs = meta.timeoutMs;
    reading.runs.push(run);
  } else if (meta.forget === 'finished' || meta.forget === 'all') {
    const kept = forget([...reading.entries.values()], meta.forget);
    reading.entries = new Map(kept.map((e) => [`${e.line}\t${e.digest}`, e]));
  }
}

/** The first line of a journal, or a UsageError: not a journal, or one of an older version. */
function readHeader(line: string, path: string, restart: boolean): JournalHeader | undefined {
  let header: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(line);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) header = parsed as Record<string, unknown>;
  } catch {
    // not JSON: refused below
  }
  if (header === undefined || !Object.hasOwn(header, MAGIC)) {
    throw new UsageError(`--journal ${path} is not an import journal; it is neither read nor changed. Nothing was sent.`, {
      hint: 'Pass --journal with a path of its own (a new file, or a journal an earlier import wrote).',
    });
  }
  if (header[MAGIC] !== VERSION || typeof header.board !== 'string' || typeof header.baseUrl !== 'string') {
    if (restart) return undefined;
    throw new UsageError(`The journal ${path} was written by another version of cardboard; it is not applied.`, {
      hint: 'Check the board for the rows it sent, then pass --restart to start afresh.',
    });
  }
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const out: JournalHeader = { board: header.board, baseUrl: header.baseUrl, input: text(header.input) ?? '?', plan: text(header.plan) ?? '', started: text(header.started) ?? '?' };
  const sha = text(header.sha256);
  if (sha !== undefined) out.sha256 = sha;
  const server = text(header.server);
  if (server !== undefined) out.server = server;
  return out;
}
