// A tunnel that lives as long as the listener: the tool is started, its output read for the public URL,
// the URL checked with a test delivery, and the tool kept running by a supervisor (supervisor.ts) that
// starts it again whenever it ends or stops forwarding. An engine: it emits events and never prints; time
// comes from the caller's clock.
import type { Clock } from '../../clock.js';
import { childStop, type Stopper } from '../../interrupt.js';
import { formatDuration, parseDurationList } from '../../units.js';
import type { StartTool, ToolExit } from './child.js';
import { type Life, supervise } from './supervisor.js';
import type { TunnelTool } from './tools.js';

/** The tunnel's clocks. Every field can be shortened with CARDBOARD_TUNNEL_TIMING (tests, slow links). */
export interface TunnelTiming {
  /** A start must give a usable URL (ssh: pass a check) within this, or it failed. */
  startMs: number;
  /** The first restart waits this long; each failure in a row doubles it, up to restartMaxMs. */
  restartMs: number;
  restartMaxMs: number;
  /** A tunnel that was up this long starts its backoff afresh when it next fails. */
  stableMs: number;
  /** A new URL is tried this long before it is called unreachable (a quick tunnel's name takes seconds to resolve). */
  firstCheckMs: number;
  /** Between two tries of a failing check. */
  retryMs: number;
  /** Between two checks of a tunnel that works: each is a request through the provider, so they are rare. */
  checkEveryMs: number;
  /** Checks failed in a row, once one passed, that mean the tunnel stopped forwarding: the tool is restarted. */
  failures: number;
}

export const DEFAULT_TIMING: TunnelTiming = {
  startMs: 30_000,
  restartMs: 1_000,
  restartMaxMs: 30_000,
  stableMs: 60_000,
  firstCheckMs: 20_000,
  retryMs: 2_000,
  checkEveryMs: 120_000,
  failures: 3,
};

/** The environment variable that changes the timing: `start=30s,restart=1s,check=2m,retry=2s,first-check=20s`. */
export const TIMING_ENV = 'CARDBOARD_TUNNEL_TIMING';

const TIMING_NAMES: ReadonlyMap<string, Exclude<keyof TunnelTiming, 'failures'>> = new Map([
  ['start', 'startMs'],
  ['restart', 'restartMs'],
  ['restart-max', 'restartMaxMs'],
  ['stable', 'stableMs'],
  ['first-check', 'firstCheckMs'],
  ['retry', 'retryMs'],
  ['check', 'checkEveryMs'],
]);

/** CARDBOARD_TUNNEL_TIMING over the defaults; a UsageError names the variable. */
export function timingFromEnv(value: string | undefined): TunnelTiming {
  return { ...DEFAULT_TIMING, ...Object.fromEntries(parseDurationList(value, TIMING_ENV, TIMING_NAMES, 'setting', 'start=30s,check=2m')) };
}

/** What one test delivery through the public URL found. */
export type CheckResult = { ok: true; ms: number } | { ok: false; reason: string };

/** What the tunnel reports. */
export type TunnelEvent =
  /** A line the tool printed (shown, escaped, with --verbose only). */
  | { type: 'output'; stream: 'stdout' | 'stderr'; line: string }
  | { type: 'starting'; attempt: number; pid: number | undefined }
  /** The URL to paste; `previous`: the URL before, when this one differs from it; `again`: after a restart. */
  | { type: 'up'; url: string; previous?: string; again: boolean }
  /** A test delivery came through `url` (`recovered`: after checks had failed). */
  | { type: 'reachable'; url: string; ms: number; recovered: boolean }
  /** The new URL did not pass a check within firstCheckMs (or a check failed once): the tunnel is left running. */
  | { type: 'unreachable'; url: string; reason: string }
  /** The tool ended or stopped forwarding; it is started again after `restartInMs`. */
  | { type: 'down'; reason: string; restartInMs: number };

interface TunnelOptions {
  /** The tool to run; none: the user runs their own tunnel or proxy at `publicUrl`, which is only checked. */
  tool?: TunnelTool;
  /** The executable, as found on PATH. */
  file?: string;
  /** The listener's path, appended to the URL a tool prints. */
  path: string;
  /** The URL the user gave (--public-url), for a tool that prints none (ssh). */
  publicUrl?: string;
  /** Sends one test delivery through `url`; never throws. */
  check(url: string, signal: AbortSignal): Promise<CheckResult>;
  start: StartTool;
  clock: Clock;
  timing?: TunnelTiming;
  /** Stop: the tool is ended and run() resolves. */
  signal: AbortSignal;
  onEvent(e: TunnelEvent): void;
}

/** The tunnel never came up: the message says why, from what the tool printed. */
export class TunnelStartError extends Error {}

/** Runs a tunnel tool until `signal`: start, read, check, restart. */
export class Tunnel {
  private readonly timing: TunnelTiming;
  /** The URL last announced. */
  private url: string | undefined;
  private everUp = false;
  /** Whether the last check of the current URL passed. */
  private reachable = false;
  /** Whether the current URL was reported unreachable: its next pass is a recovery, not a first. */
  private toldUnreachable = false;
  /** Aborted when the tool prints a new URL while the watch waits between checks. */
  private newUrl: Stopper | undefined;

  constructor(private readonly opts: TunnelOptions) {
    this.timing = opts.timing ?? DEFAULT_TIMING;
  }

  /**
   * Resolves when `signal` stops the tunnel (the tool is gone by then). Rejects with TunnelStartError if the
   * first start fails; after the tunnel was up once, the supervisor starts the tool again after every end.
   */
  run(): Promise<void> {
    return supervise({
      life: (attempt) => this.once(attempt),
      policy: this.timing,
      clock: this.opts.clock,
      signal: this.opts.signal,
      onRestart: (reason, restartInMs) => this.opts.onEvent({ type: 'down', reason, restartInMs }),
      neverUp: (reason) => new TunnelStartError(reason),
    });
  }

  /** One life of the tool, from its start to its end (or ours). */
  private async once(attempt: number): Promise<Life> {
    const { tool, clock, onEvent } = this.opts;
    if (this.opts.signal.aborted) return { stopped: true };
    if (!tool) return this.checkOnly();
    // Aborted when the run stops or the tool ends: every wait of this run of the tool ends with it.
    const life = childStop(this.opts.signal);
    const reader = tool.reader();
    let lastError: string | undefined;
    let found: ((url: string) => void) | undefined;
    const printed = new Promise<string>((resolve) => (found = resolve));
    const onLine = (line: string, stream: 'stdout' | 'stderr') => {
      onEvent({ type: 'output', stream, line });
      const read = reader(line, stream);
      if (read?.error) lastError = read.error;
      if (read?.url) found?.(read.url);
    };
    const child = this.opts.start(this.opts.file!, tool.args, onLine);
    onEvent({ type: 'starting', attempt, pid: child.pid });
    let exit: ToolExit | undefined;
    void child.exited.then((e) => {
      exit = e;
      life.abort('exited');
    });
    const why = (fallback: string) => {
      const ended = exit ? `${tool.name} exited (${exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`})` : fallback;
      return lastError ? `${ended}: ${lastError}` : ended;
    };
    try {
      let upAt: number;
      if (tool.urlFrom === 'output') {
        const url = await this.within(printed, this.timing.startMs, life.signal);
        if (this.opts.signal.aborted) return { stopped: true };
        if (url === undefined) return { stopped: false, reason: why(`${tool.name} printed no public URL in ${formatDuration(this.timing.startMs)}`) };
        upAt = clock.now();
        this.announce(new URL(this.opts.path, url).href);
        // A URL printed again later is announced if it differs (the tool reconnected under a new name).
        found = (next) => {
          const changed = new URL(this.opts.path, next).href;
          if (changed === this.url) return;
          this.announce(changed);
          this.newUrl?.abort('new url');
        };
        await this.firstCheck(life.signal);
      } else {
        const url = this.opts.publicUrl!;
        const passed = await this.checkUntil(url, this.timing.startMs, life.signal);
        if (this.opts.signal.aborted) return { stopped: true };
        if (!passed.ok) return { stopped: false, reason: why(`no test delivery came through ${url} in ${formatDuration(this.timing.startMs)} (${passed.reason})`) };
        upAt = clock.now();
        this.announce(url);
        onEvent({ type: 'reachable', url, ms: passed.ms, recovered: false });
        this.reachable = true;
        this.toldUnreachable = false;
      }
      const stalled = await this.watch(life.signal);
      if (this.opts.signal.aborted) return { stopped: true };
      return { stopped: false, reason: stalled ?? why(`${tool.name} ended`), upMs: clock.now() - upAt };
    } finally {
      life.abort('done');
      await child.stop();
    }
  }

  /** No tool: the user's URL is announced and checked until the run stops; nothing can be restarted. */
  private async checkOnly(): Promise<Life> {
    const { signal } = this.opts;
    this.announce(this.opts.publicUrl!);
    await this.firstCheck(signal);
    while (!signal.aborted) {
      const stalled = await this.watch(signal);
      if (stalled === undefined) break;
      this.reachable = false;
      this.toldUnreachable = true;
      this.opts.onEvent({ type: 'unreachable', url: this.url!, reason: stalled });
    }
    return { stopped: true };
  }

  private announce(url: string): void {
    const previous = this.url;
    const again = this.everUp;
    this.url = url;
    this.everUp = true;
    if (url !== previous) {
      this.reachable = false;
      this.toldUnreachable = false;
    }
    this.opts.onEvent(previous !== undefined && previous !== url ? { type: 'up', url, previous, again } : { type: 'up', url, again });
  }

  /** A new URL is tried for firstCheckMs: reachable, or unreachable with the last reason. */
  private async firstCheck(life: AbortSignal): Promise<void> {
    const url = this.url!;
    const result = await this.checkUntil(url, this.timing.firstCheckMs, life);
    if (life.aborted) return;
    this.reachable = result.ok;
    this.toldUnreachable = !result.ok;
    if (result.ok) this.opts.onEvent({ type: 'reachable', url, ms: result.ms, recovered: false });
    else this.opts.onEvent({ type: 'unreachable', url, reason: result.reason });
  }

  /**
   * Checks every checkEveryMs while the tool runs. Returns why the tunnel stopped forwarding (`failures`
   * checks in a row failed after one had passed), or undefined when the tool ended or the run stopped. A URL
   * that never passed is not restarted for failing: a new quick tunnel would only get another name.
   */
  private async watch(life: AbortSignal): Promise<string | undefined> {
    const { clock, onEvent } = this.opts;
    let checked = this.url;
    for (;;) {
      // A URL the tool prints while it runs ends the wait: it is tried at once, as a new URL is at start.
      this.newUrl = childStop(life);
      await clock.sleep(this.timing.checkEveryMs, this.newUrl.signal);
      this.newUrl = undefined;
      if (life.aborted) return undefined;
      if (this.url !== checked) {
        checked = this.url;
        await this.firstCheck(life);
        continue;
      }
      const url = this.url!;
      let result = await this.opts.check(url, life);
      if (life.aborted) return undefined;
      if (result.ok) {
        // A pass after the URL was reported unreachable is a recovery.
        if (!this.reachable) onEvent({ type: 'reachable', url, ms: result.ms, recovered: this.toldUnreachable });
        this.toldUnreachable = false;
        this.reachable = true;
        continue;
      }
      if (!this.reachable) continue;
      for (let failed = 1; !result.ok && failed < this.timing.failures; failed++) {
        await clock.sleep(this.timing.retryMs, life);
        if (life.aborted) return undefined;
        result = await this.opts.check(url, life);
        if (life.aborted) return undefined;
      }
      if (!result.ok) return `stopped forwarding: ${this.timing.failures} test deliveries in a row failed (last: ${result.reason})`;
    }
  }

  /** Checks `url` every retryMs until one passes or `ms` has passed; the last result. */
  private async checkUntil(url: string, ms: number, life: AbortSignal): Promise<CheckResult> {
    const { clock } = this.opts;
    const deadline = clock.now() + ms;
    for (;;) {
      const result = await this.opts.check(url, life);
      if (result.ok || life.aborted || clock.now() + this.timing.retryMs > deadline) return result;
      await clock.sleep(this.timing.retryMs, life);
      if (life.aborted) return result;
    }
  }

  /** `work`'s value, or undefined after `ms` or when `signal` aborts; the timer is cancelled either way. */
  private async within<T>(work: Promise<T>, ms: number, signal: AbortSignal): Promise<T | undefined> {
    const timer = childStop(signal);
    try {
      return await Promise.race([work, this.opts.clock.sleep(ms, timer.signal).then(() => undefined)]);
    } finally {
      timer.abort('done');
    }
  }
}
