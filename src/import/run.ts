// An import run's files, opened in order before the first row is sent: the board's lock (one import per
// board), the journal (the memory of the board's imports, checked against the board when it remembers
// cards) and the report files; then the engine over them. Whatever the end, each is closed and the lock
// released. It says what it found as notices and passes the engine's events on: the command renders them.
import { dirname, resolve } from 'node:path';
import type { Api, ApiClient } from '../api/types.js';
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import type { FileLock } from '../file-lock.js';
import { fileError } from '../fs-errors.js';
import { DEFAULT_TIMEOUT_MS } from '../http/index.js';
import { boardLockPath, lockBoard, serverIdentity } from './board-lock.js';
import { type EngineResult, runEngine } from './engine.js';
import { defaultJournalPath, holdsCard, Journal, type JournalEntry, type JournalKey, planDigest } from './journal.js';
import type { KeyIndex } from './match-index.js';
import { MirrorWrites } from './mirror-writes.js';
import type { MirrorStore } from '../mirror/types.js';
import { ImportOutputs } from './outputs.js';
import { type ImportPlan, isJsonInput } from './plan.js';
import type { FileScan } from './scan.js';
import type { ColumnMapping, CsvItem, ImportEvent } from './types.js';

/** A run ready to send: the client, the file's hash and count, the header, the mapping, the rows to come. */
export interface ResolvedImport {
  api: ApiClient;
  scan?: FileScan;
  headers: string[];
  columns: ColumnMapping[];
  match?: KeyIndex;
  /** --mirror: the board's mirror (fresh or not), kept current with this run's writes; the command closes it. */
  mirror?: MirrorStore;
  items: AsyncIterable<CsvItem>;
  /** Send empty values (sendsEmpty: --empty send, or JSON input). */
  sendEmpty: boolean;
}

/** What a run takes from the process: time, the two stops, the secrets kept out of its files, its --timeout. */
interface RunEnvironment {
  clock: Clock;
  /** Stop now: requests in flight are cut off (their rows left uncertain). */
  stopNow: AbortSignal;
  /** Take no new work (the first Ctrl-C of a draining run). */
  drain: AbortSignal;
  secrets: Iterable<string>;
  /** This run's request timeout, written to the journal: how long its requests may still land after a kill. */
  timeoutMs: number;
}

/** What the run found before sending anything, for the command to say. */
export type RunNotice =
  | { type: 'no-journal' }
  /** The cards the journal remembers are gone from the board (memoryIsStale): every row is sent again. */
  | { type: 'stale-memory'; board: string; rows: number; at: string | undefined; checked: number }
  /** The journal holds earlier runs of this board: `waitMs` is the wait for rows a killed run may still land. */
  | { type: 'earlier-runs'; journal: Journal; key: JournalKey; waitMs: number | undefined };

/** How many remembered cards are read back before a run trusts its journal's memory of them. */
const MEMORY_CHECKS = 3;

/** How often the report files (--results, --rejects) are written while rows come. */
const OUTPUTS_FLUSH_MS = 1000;

/**
 * Whether the cards a journal remembers are gone from the board: up to MEMORY_CHECKS of them (the newest,
 * the oldest and one between) are read by id, and only when every one answers 404. A board emptied or
 * replaced under the same id (a restarted emulator) makes the memory stale; a card deleted by someone is
 * one of many, and a read that fails otherwise (the network, a 500) proves nothing either way.
 */
async function memoryIsStale(api: Api, entries: readonly JournalEntry[], signal: AbortSignal): Promise<{ checked: number } | undefined> {
  const ids = entries.filter((e) => e.id !== undefined && holdsCard(e)).map((e) => e.id!);
  if (ids.length === 0) return undefined;
  const picks = [...new Set([ids.at(-1)!, ids[0]!, ids[Math.floor(ids.length / 2)]!])].slice(0, MEMORY_CHECKS);
  for (const id of picks) {
    try {
      await api.getCard(id, { signal, maxTries: 3 });
      return undefined;
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 404) return undefined;
    }
  }
  return { checked: picks.length };
}

/** The journal's key: the board (its server's identity and id); the input, its content and the plan are reported. */
function journalKey(plan: ImportPlan, resolved: ResolvedImport, server: string): JournalKey {
  const { file } = plan.source;
  const key: JournalKey = { board: resolved.api.board.id, baseUrl: resolved.api.board.baseUrl, server, input: file === '-' ? '-' : resolve(file), plan: planDigest(plan, resolved.columns) };
  if (resolved.scan) key.sha256 = resolved.scan.sha256;
  return key;
}

/** Lock the board: one import into it at a time, whatever the input and the environment. */
async function lockTheBoard(plan: ImportPlan, resolved: ResolvedImport, clock: Clock): Promise<{ lock: FileLock; server: string }> {
  const { file } = plan.source;
  const server = await serverIdentity(resolved.api.board.baseUrl);
  let lockPath: string | undefined;
  try {
    lockPath = boardLockPath(server, resolved.api.board.id);
    return { lock: await lockBoard(lockPath, `importing ${file === '-' ? 'stdin' : resolve(file)}`, clock), server };
  } catch (err) {
    throw fileError(err, { action: 'create the import lock in', path: lockPath ? dirname(lockPath) : '~/.cache/cardboard/locks', hint: 'The lock is kept in ~/.cache/cardboard/locks (or /tmp/cardboard-<uid>-locks): make one of them writable, then run again.' });
  }
}

/**
 * Open the journal: next to the file, or --journal; none for stdin without --journal. A journal of earlier
 * runs is applied by content (resume.ts); rows it remembers as imported are skipped, once a few of their
 * cards are read back (memoryIsStale).
 */
async function openJournal(plan: ImportPlan, resolved: ResolvedImport, server: string, env: RunEnvironment, notice: (n: RunNotice) => void, writes?: MirrorWrites): Promise<Journal | undefined> {
  const { journal: journalFlag } = plan.outputs;
  if (journalFlag === undefined && resolved.scan === undefined) {
    notice({ type: 'no-journal' });
    return undefined;
  }
  const key = journalKey(plan, resolved, server);
  const path = journalFlag ?? defaultJournalPath(plan.source.file, key);
  const { restart, again } = plan.policy;
  let journal: Journal;
  let stale: RunNotice | undefined;
  try {
    journal = await Journal.open(path, key, {
      forget: restart ? 'all' : again ? 'finished' : undefined,
      timeoutMs: env.timeoutMs,
      clock: env.clock,
      outcomes: writes && { save: () => writes.flush() },
      stale: async (entries, at, lastRunComplete) => {
        // A re-run with --match-on sends every row by its key whatever the journal remembers (engine.ts
        // remembered()): the memory is not used, so it is not read back. Kept to --mirror, whose re-sync
        // promises no request but the changed rows and the schema.
        if (lastRunComplete && resolved.mirror !== undefined && resolved.match !== undefined) return false;
        const found = await memoryIsStale(resolved.api, entries, env.stopNow);
        if (found) stale = { type: 'stale-memory', board: resolved.api.board.id, rows: entries.filter(holdsCard).length, at, ...found };
        return found !== undefined;
      },
    }, env.secrets);
  } catch (err) {
    // A directory that cannot be created or written names the flag that moves it.
    const hint = journalFlag === undefined
      ? `The journal is kept next to the input; pass --journal <path> (a file in a writable directory) to keep it elsewhere.`
      : 'Pass --journal with a file path in a writable directory.';
    throw fileError(err, { action: 'write the journal', path, hint });
  }
  if (stale) notice(stale);
  if (journal.found && journal.previous.length > 0) notice({ type: 'earlier-runs', journal, key, waitMs: inFlightWaitMs(journal, env.clock) });
  return journal;
}

/**
 * How long from now rows that may still be landing (in flight when an earlier run stopped, or cut off)
 * must wait before they are looked for: until that run's own request timeout has passed since its last
 * journal write (a server may apply a request it received just before the kill up to then, and a read
 * before that would not find the card). Undefined when no such row is in the journal.
 */
function inFlightWaitMs(journal: Journal | undefined, clock: Clock): number | undefined {
  const by = journal?.landsBy(DEFAULT_TIMEOUT_MS);
  return by === undefined ? undefined : Math.max(0, by - clock.now());
}

/** Rows an earlier run finished with a card (created, updated or found): a resumed run skips them. */
export function finishedBefore(journal: Journal | undefined): number {
  let n = 0;
  for (const e of journal?.previous ?? []) if (holdsCard(e)) n++;
  return n;
}

/** An import with its lock, journal and report files open: send() runs the engine, close() ends them all. */
export class ImportRun {
  private closed = false;

  private constructor(
    private readonly plan: ImportPlan,
    private readonly resolved: ResolvedImport,
    private readonly env: RunEnvironment,
    private readonly lock: FileLock,
    readonly journal: Journal | undefined,
    private readonly outputs: ImportOutputs,
    /** --mirror: this run's cards on their way to the board's mirror. */
    readonly mirrorWrites: MirrorWrites | undefined,
  ) {}

  /** Lock the board, open the journal (saying what it found through `notice`), then the report files. */
  static async open(plan: ImportPlan, resolved: ResolvedImport, env: RunEnvironment, notice: (n: RunNotice) => void): Promise<ImportRun> {
    const { lock, server } = await lockTheBoard(plan, resolved, env.clock);
    let journal: Journal | undefined;
    const writes = resolved.mirror && new MirrorWrites(resolved.mirror, env.clock);
    try {
      journal = await openJournal(plan, resolved, server, env, notice, writes);
      const { results, rejects } = plan.outputs;
      return new ImportRun(plan, resolved, env, lock, journal, new ImportOutputs({ results, rejects }, resolved.headers, isJsonInput(plan.source), env.secrets), writes);
    } catch (err) {
      // Nothing was sent: the journal and the lock go as if the run had not started.
      if (journal?.previous.length === 0) journal.discard();
      else journal?.close();
      lock.release();
      throw err;
    }
  }

  /**
   * The rows progress starts at: a resume starts at the rows already finished; a re-run of a complete import
   * counts the rows it skips as they come (rows with a key are sent again, so the journal's count would overstate them).
   */
  get startsAt(): number {
    return this.journal?.lastRunComplete() ? 0 : finishedBefore(this.journal);
  }

  /** Send every row through the engine; each row's outcome goes to the report files, then every event to `onEvent`. */
  async send(onEvent: (e: ImportEvent) => void): Promise<EngineResult> {
    const { plan, resolved, env, journal, outputs, mirrorWrites } = this;
    const { policy } = plan;
    // The report files are written every OUTPUTS_FLUSH_MS of the run's clock while rows come, and at close.
    const sent = new AbortController();
    const flushing = (async () => {
      while (!sent.signal.aborted) {
        await env.clock.sleep(OUTPUTS_FLUSH_MS, sent.signal);
        if (!sent.signal.aborted) {
          outputs.flush();
          // Without a journal, nothing else writes the mirror while rows come.
          if (!journal) mirrorWrites?.flush();
        }
      }
    })();
    try {
      const wait = inFlightWaitMs(journal, env.clock);
      const result = await runEngine(resolved.items, {
        api: resolved.api,
        clock: env.clock,
        columns: resolved.columns,
        sendEmpty: resolved.sendEmpty,
        concurrency: policy.concurrency,
        giveUpAfterMs: policy.giveUpAfterMs,
        journal,
        settleInFlightAt: wait === undefined ? undefined : env.clock.now() + wait,
        rerun: journal?.lastRunComplete() ?? false,
        match: resolved.match,
        cards: mirrorWrites,
        force: policy.force,
        signal: env.drain,
        stopNow: env.stopNow,
        onEvent: (e) => {
          if (e.type === 'row') outputs.add(e.outcome);
          onEvent(e);
        },
      });
      // The journal is kept, whatever the end: it is the memory of this board's imports. A run that read its
      // input to the end says so, and the next one is a re-run (rows done are named once), not a resume.
      if (result.summary.stopped === undefined) journal?.complete();
      // The last cards before the journal's last records (close), or at once without a journal.
      mirrorWrites?.flush();
      if (mirrorWrites?.failure && !result.fatal) return { ...result, fatal: mirrorWrites.failure };
      return result;
    } finally {
      sent.abort();
      await flushing;
    }
  }

  /** Close the report files and the journal and release the lock (once; later calls do nothing). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.outputs.close();
    this.journal?.close();
    this.mirrorWrites?.flush();
    this.lock.release();
  }
}
