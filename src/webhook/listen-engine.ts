// `webhook listen` as an engine: the record file under its lock (or a spool for forwarding), the cards'
// states restored from it, the listener, the mirror hook, the inspector, the tunnel, the outage of the
// forward target and the run's shutdown. It emits typed events and never prints; the command renders them.
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../clock.js';
import { LISTENER_BEAT_MS, type MirrorStore } from '../mirror/types.js';
import { CardboardError, UsageError } from '../errors.js';
import type { FileLock } from '../file-lock.js';
import { childStop, type Stopper, whenAborted } from '../interrupt.js';
import type { Duration } from '../units.js';
import { CardStates, type DeliveryChange } from './changes.js';
import type { Delivery } from './delivery.js';
import { readHistory } from './history.js';
import { type InspectPlan, makeInspector, type OpenedInspector, startInspector } from './inspector/open.js';
import type { ReplayEvent } from './inspector/replay.js';
import type { Inspector } from './inspector/server.js';
import { type ConnectionLimits, reachesListener } from './limits.js';
import { Listener, type ListenerEvent, type ListenerStats, refusedTotal, SelfForwardError } from './listener.js';
import { type MirrorCounts, MirrorHook } from './mirror-hook.js';
import { type OutageState, type OutageStep, OutageTracker } from './outage.js';
import type { RecordFile } from './record-file.js';
import { lockRecord, openRecord } from './record-open.js';
import { filterText, hasFilters, type RouteDecision, routeCursorPath, Router, type Routing } from './routes.js';
import { type PublicPlan, runTunnel } from './tunnel/public.js';
import type { TunnelEvent } from './tunnel/tunnel.js';

/** A listen run as plain data: where to listen, what to check, record, forward, show and make public. */
export interface ListenPlan {
  host: string;
  port: number;
  /** The only path served. */
  path: string;
  /** The x-signingKey every delivery must carry; undefined: none is checked (--no-verify). */
  key: string | undefined;
  /** Replaced wherever they occur in a delivery before it is kept or shown: the key, the board's token. */
  secrets: readonly string[];
  maxBody: number;
  limits: Partial<ConnectionLimits>;
  /** The record file; without it, forwarding goes through a spool file removed once all is forwarded. */
  record?: string;
  /** One --forward-to without filters. */
  forward?: { url: string; timeout: Duration };
  /**
   * Instead of `forward`: the filters (--changed, --where) and the routes of --forward-to (routes.ts).
   * `namesChecked`: the filters' field names were checked against the board's schema; else a card with a
   * field that differs from a filter's only by case is warned about once.
   */
  routing?: Routing & { timeout: Duration; namesChecked: boolean };
  inspect?: { plan: InspectPlan; insecure: boolean | undefined; replayTimeout: Duration };
  /** Make the listener public (needs `key`): a tunnel tool, or the user's URL, checked. */
  public?: PublicPlan;
  /** Report the outage every second while the forward target is down (a live line's clock). */
  ticks?: boolean;
  /** The board's mirror, opened at start: each verified delivery is applied to it before its 200 (MirrorHook). */
  mirror?: { open(): MirrorStore };
}

/** What the engine reports. */
export type ListenEvent =
  /** A verified delivery, recorded and answered 200, with what it changed on its card. */
  | { type: 'delivery'; delivery: Delivery; change: DeliveryChange; view?: string }
  | Extract<ListenerEvent, { type: 'rejected' | 'error' | 'looped' }>
  /** One try to forward a delivery (with its record entry: the app's answer), with what it did to the outage of the forward target. */
  | (Extract<ListenerEvent, { type: 'forward' }> & { outage: OutageStep })
  /** Every second while the forward target is down (with `ticks`): the outage as it stands. */
  | { type: 'outage'; state: OutageState }
  | { type: 'tunnel'; tunnel: TunnelEvent }
  /** A delivery sent again from the inspector's page or API (as recorded, or edited), with the app's answer. */
  | ({ type: 'replay' } & ReplayEvent)
  /** The run is over: the server closed, the record file flushed and closed, the lock released, the spool removed if nothing waits in it. */
  | { type: 'stopped'; stats: ListenerStats; pending: number | undefined; spool?: { path: string; kept: boolean }; mirror?: MirrorCounts & { location: string } };

/** What a renderer may read between events. */
export interface ListenView {
  readonly stats: ListenerStats;
  /** The outage of each forward target that is down now, in the order of the routes. */
  outages(): Array<{ url: string; state: OutageState }>;
}

/** The listener is up. */
export interface ListenReady {
  /** The URL to paste into Card Sources (spec 2.4, Webhook URL). */
  url: string;
  /** The inspector page's URL, with its token. */
  inspectorUrl?: string;
  /** With --record, the file that keeps the inspector's token for the next run. */
  inspectorTokenFile?: string;
  /** The port the kept token was served on last run, when this run serves it on another (the page's URL changed). */
  inspectorMovedFrom?: number;
  /** Without --record, the file deliveries are spooled in for forwarding. */
  spool?: string;
  /** Recorded deliveries never forwarded, sent first (a resumed run). */
  resumed: number;
  /** Deliveries of a record file made without forwarding, which are not forwarded (replay sends them). */
  skipped: number;
  /** Each --forward-to with its filters (as flags) and its own `resumed` and `skipped` (the fields above are the first route's). */
  routes: Array<{ url: string; filter: string; resumed: number; skipped: number }>;
  /** The filters given before any --forward-to, as flags: they choose what is printed. */
  filter?: string;
  /** Where the mirror fed by this listener is (MirrorStore.location). */
  mirror?: string;
}

interface ListenEngineOptions {
  clock: Clock;
  /** Each event, with the engine's view for whatever the renderer redraws. */
  onEvent(e: ListenEvent, view: ListenView): void;
}

function selfForward(url: string, port: number): UsageError {
  return new UsageError(`--forward-to ${url} is this listener itself (port ${port}): every delivery would be forwarded back to it for ever.`, {
    hint: "Point --forward-to at your app's address, or listen on another --port.",
  });
}

/** The port a kept token was served on, when the inspector now serves on another one (taken, or --inspect named it). */
function movedFrom(opened: OpenedInspector | undefined): number | undefined {
  return opened?.kept && opened.kept.port !== opened.inspector.port ? opened.kept.port : undefined;
}

/** Refuse, before anything is opened, a forward to the listener itself; with port 0 the listener checks once bound. */
export function refuseSelfForward(urls: readonly string[], plan: Pick<ListenPlan, 'host' | 'port'>): void {
  for (const url of urls) if (plan.port !== 0 && reachesListener(url, plan.host, plan.port)) throw selfForward(url, plan.port);
}

const NO_FILTER = { where: [], changed: [] };

/**
 * How often, at most, a listener syncs the mirror to the disk while deliveries come: what an OS crash or a
 * power loss may take of what it acknowledged (a crash of the process takes nothing). A sync is a checkpoint,
 * two fsyncs and a copy of the pages written since the last one: once a second it cost the listener under
 * load a few milliseconds a second (docs/benchmarks.md).
 */
const MIRROR_SYNC_MS = 1000;

/** The listener's first beat in the mirror: a mirror that cannot be written is said so, naming it. */
function firstBeat(store: MirrorStore, since: string): void {
  try {
    store.listenerBeat(since, since);
  } catch (err) {
    if (err instanceof CardboardError) throw err;
    throw new CardboardError(`cannot write to the mirror ${store.location}: ${(err as Error).message}`, {
      hint: "For a file, check that it and its folder are writable; on PostgreSQL, that the role may write the mirror's tables (docs/mirror.md). Or set CARDBOARD_MIRROR to another mirror.",
      cause: err,
    });
  }
}

/**
 * Runs `webhook listen`: start() opens everything and binds the port, run() serves until stopped, then
 * shuts down in order: the server (requests in flight finish, then the record file is flushed and closed)
 * and the tunnel's tool, then the inspector, the mirror (the listener's beat ends) and the lock, and last the
 * spool, removed only when nothing in it waits to be forwarded.
 */
export class ListenEngine implements ListenView {
  private readonly states: CardStates;
  /** The routes of --forward-to (one for a plain --forward-to), and the router when some filter is given. */
  private readonly routing: (Routing & { timeout: Duration }) | undefined;
  private readonly router: Router | undefined;
  /** Every route's URL: what a delivery goes to when no filter is given. */
  private readonly urls: string[] | undefined;
  private readonly trackers = new Map<string, OutageTracker>();
  private listener: Listener | undefined;
  private inspector: Inspector | undefined;
  private lock: FileLock | undefined;
  private spool: string | undefined;
  private mirror: { store: MirrorStore; hook: MirrorHook; since: string } | undefined;

  constructor(
    private readonly plan: ListenPlan,
    private readonly opts: ListenEngineOptions,
  ) {
    // A public URL is checked with a delivery signed with the key: one the listener verifies.
    if (plan.public && plan.key === undefined) throw new Error('a public listener needs the signing key');
    this.states = new CardStates({ secrets: plan.secrets });
    const routing = plan.routing ?? (plan.forward && { global: NO_FILTER, routes: [{ url: plan.forward.url, filter: NO_FILTER }], timeout: plan.forward.timeout });
    this.routing = routing;
    this.router = routing && hasFilters(routing) ? new Router(routing, { secrets: plan.secrets, warn: plan.routing?.namesChecked ? undefined : (message) => this.emit({ type: 'error', message }) }) : undefined;
    this.urls = routing?.routes.map((r) => r.url);
    for (const url of this.urls ?? []) this.trackers.set(url, new OutageTracker());
  }

  get stats(): ListenerStats {
    return this.started().stats;
  }

  outages(): Array<{ url: string; state: OutageState }> {
    const now = this.opts.clock.now();
    const down: Array<{ url: string; state: OutageState }> = [];
    for (const [url, tracker] of this.trackers) {
      const state = tracker.state(now);
      if (state) down.push({ url, state });
    }
    return down;
  }

  /** Open the record file (or the spool), the inspector and the listener; errors name the flag to fix. */
  async start(): Promise<ListenReady> {
    const { plan } = this;
    const { clock } = this.opts;
    // Forwarding always goes through a file so nothing acknowledged waits only in memory.
    // Filters without --forward-to forward nothing: nothing to spool.
    this.spool = this.routing && this.routing.routes.length > 0 && !plan.record ? join(tmpdir(), `cardboard-webhook-${process.pid}-${clock.now()}.jsonl`) : undefined;
    const recordPath = plan.record ?? this.spool;
    // One listener per record file: two would number their deliveries alike and interleave their lines.
    this.lock = plan.record === undefined ? undefined : await lockRecord(plan.record, clock);
    let record: RecordFile | undefined;
    try {
      record = recordPath === undefined ? undefined : openRecord(recordPath);
      const store = plan.mirror?.open();
      this.mirror = store && { store, hook: new MirrorHook(store, this.states, plan.secrets), since: new Date(clock.now()).toISOString() };
      const opened = plan.inspect ? await this.makeInspector(plan.inspect) : undefined;
      const inspector = opened?.inspector;
      this.inspector = inspector;
      // The cards' last states, from what the record file holds (a restarted listener goes on where it was);
      // the inspector shows the same deliveries as history, each with the app's last answer to it.
      const router = this.router;
      if (plan.record) {
        readHistory(
          plan.record,
          this.states,
          inspector || router
            ? (d, change) => {
                const decision = router?.decide(d, change, this.states, false);
                inspector?.add(d, change, { recorded: true, routes: decision?.routes ?? this.urls });
              }
            : undefined,
          undefined,
          inspector && ((f) => inspector.recordedForward(f)),
        );
      }
      const routing = this.routing;
      const listener = new Listener({
        host: plan.host,
        port: plan.port,
        path: plan.path,
        key: plan.key,
        secrets: plan.secrets,
        maxBody: plan.maxBody,
        limits: plan.limits,
        record,
        routes: routing?.routes.map((route, i) => ({
          url: route.url,
          timeout: routing.timeout,
          cursor: routeCursorPath(recordPath!, routing, i),
          takes: router && ((d: Delivery) => router.takes(i, d)),
          taken: router && ((afterSeq: number, lastSeq: number) => router.taken(i, afterSeq, lastSeq)),
        })),
        mirror: this.mirror?.hook,
        clock,
        onEvent: (e) => this.onListenerEvent(e),
      });
      this.listener = listener;
      // The first beat before the port is bound: a mirror that cannot be written ends the run before any delivery.
      if (this.mirror) firstBeat(this.mirror.store, this.mirror.since);
      const ready = await this.bind(listener, opened);
      inspector?.stats(listener.stats.delivered, refusedTotal(listener.stats));
      const routes = listener.forwarders.map((f, i) => ({ url: routing!.routes[i]!.url, filter: filterText(routing!.routes[i]!.filter), resumed: f.resumed, skipped: f.skipped }));
      const filter = routing && filterText(routing.global);
      return { ...ready, inspectorTokenFile: opened?.tokenFile, inspectorMovedFrom: movedFrom(opened), spool: this.spool, resumed: routes[0]?.resumed ?? 0, skipped: routes[0]?.skipped ?? 0, routes, ...(filter ? { filter } : {}), mirror: this.mirror?.store.location };
    } catch (err) {
      await this.inspector?.stop();
      await record?.close();
      this.closeMirror(true);
      this.mirror = undefined;
      this.lock?.release();
      throw err;
    }
  }

  /**
   * Serve until `stop` aborts (or the tunnel never comes up, which aborts it), then shut down. `signal`
   * (stop now) cuts the wait for requests in flight short. Rejects with the tunnel's failure, after the
   * `stopped` event.
   */
  async run(stop: Stopper, signal: AbortSignal): Promise<void> {
    const listener = this.started();
    const ticker = childStop();
    const ticks = this.plan.ticks && this.trackers.size > 0 ? this.tick(ticker.signal) : undefined;
    const beats = this.mirror ? Promise.all([this.beat(this.mirror, ticker.signal), this.syncs(this.mirror, ticker.signal)]) : undefined;
    let failure: unknown;
    const tunnel = this.plan.public
      ? runTunnel(this.plan.public, {
          host: this.plan.host,
          path: this.plan.path,
          listener,
          key: this.plan.key!,
          clock: this.opts.clock,
          signal: stop.signal,
          onEvent: (tunnel) => this.emit({ type: 'tunnel', tunnel }),
        }).catch((err: unknown) => {
          failure = err;
          stop.abort('tunnel');
        })
      : undefined;
    try {
      await whenAborted(stop.signal);
      await Promise.all([listener.stop(signal), tunnel]);
    } finally {
      await this.inspector?.stop();
      ticker.abort('stopped');
      await Promise.all([ticks, beats]);
      // After the server closed and the record file was closed: no delivery is applied any more.
      this.closeMirror();
      this.lock?.release();
    }
    const pending = listener.forwarder && listener.forwarders.reduce((sum, f) => sum + f.pending, 0);
    // The spool goes only once every delivery in it was forwarded; else it is where a resumed run starts.
    if (this.spool && pending === 0) {
      rmSync(this.spool, { force: true });
      for (let i = 0; i < listener.forwarders.length; i++) rmSync(routeCursorPath(this.spool, this.routing!, i), { force: true });
    }
    const mirror = this.mirror && { location: this.mirror.store.location, ...this.mirror.hook.counts };
    this.emit({ type: 'stopped', stats: listener.stats, pending, spool: this.spool === undefined ? undefined : { path: this.spool, kept: pending !== 0 }, mirror });
    if (failure !== undefined) throw failure;
  }

  private started(): Listener {
    if (!this.listener) throw new Error('the listen engine is not started');
    return this.listener;
  }

  private emit(e: ListenEvent): void {
    this.opts.onEvent(e, this);
  }

  private makeInspector(inspect: NonNullable<ListenPlan['inspect']>): Promise<OpenedInspector> {
    const { plan } = this;
    return makeInspector({
      plan: inspect.plan,
      key: plan.key,
      verified: plan.key !== undefined,
      forwardTo: this.urls?.[0],
      record: plan.record,
      insecure: inspect.insecure,
      replayTimeout: inspect.replayTimeout,
      secrets: plan.secrets,
      onReplay: (e) => this.emit({ type: 'replay', ...e }),
      listener: () => this.listener?.bound,
    });
  }

  /** Start the inspector, then the listener: a port the inspector cannot have ends the run before any delivery is accepted. */
  private async bind(listener: Listener, inspector: OpenedInspector | undefined): Promise<{ url: string; inspectorUrl?: string }> {
    const { host, port } = this.plan;
    try {
      const inspectorUrl = inspector ? await startInspector(inspector) : undefined;
      return { url: await listener.start(), inspectorUrl };
    } catch (err) {
      if (err instanceof CardboardError) throw err;
      if (err instanceof SelfForwardError) throw selfForward(err.url, err.port);
      const code = (err as NodeJS.ErrnoException).code;
      throw new CardboardError(`cannot listen on ${host}:${port} (${code ?? (err as Error).message})`, { hint: code === 'EADDRINUSE' ? 'Pick another --port (0: any free port).' : undefined, cause: err });
    }
  }

  private onListenerEvent(event: ListenerEvent): void {
    const inspector = this.inspector;
    switch (event.type) {
      case 'listening':
        return;
      case 'delivery': {
        // Every delivery is shown as what it did to its card, against the card's last delivered state.
        // Parsed once: the mirror's hook read the body before its 200.
        const { body } = event.delivery;
        const change = this.states.applyParsed(this.mirror?.hook.take(event.delivery) ?? this.states.parse(body), body.length);
        // With filters, decided now, against the card's state as this delivery left it (routes.ts).
        const decision: RouteDecision | undefined = this.router?.decide(event.delivery, change, this.states);
        inspector?.add(event.delivery, change, { recorded: false, routes: decision?.routes ?? this.urls });
        if (decision?.printed !== false) this.emit({ type: 'delivery', delivery: event.delivery, change, view: event.view });
        break;
      }
      case 'forward':
        this.emit({ ...event, outage: this.trackers.get(event.url)!.next(event, this.opts.clock.now()) });
        inspector?.forward(event);
        return;
      default:
        this.emit(event);
    }
    if ((event.type === 'delivery' || event.type === 'rejected') && inspector) inspector.stats(this.stats.delivered, refusedTotal(this.stats));
  }

  /**
   * The listener's sign of life in the mirror, every LISTENER_BEAT_MS: a mirror fed by a running listener is
   * fresh. A beat that cannot be written is reported once; deliveries go on being applied (or refused).
   */
  private async beat(mirror: NonNullable<ListenEngine['mirror']>, signal: AbortSignal): Promise<void> {
    let reported = false;
    for (;;) {
      await this.opts.clock.sleep(LISTENER_BEAT_MS, signal);
      if (signal.aborted) return;
      try {
        mirror.store.listenerBeat(mirror.since, new Date(this.opts.clock.now()).toISOString());
        reported = false;
      } catch (err) {
        if (!reported) this.emit({ type: 'error', message: `cannot write the listener's beat to the mirror: ${(err as Error).message}` });
        reported = true;
      }
    }
  }

  /**
   * Every MIRROR_SYNC_MS in which deliveries were applied, the mirror is synced (MirrorStore.sync): what it
   * acknowledged survives a crash of the machine after at most that long, and an idle mirror costs nothing.
   * A sync that fails is reported once; deliveries go on being applied (each commit survives a crash of the
   * process whatever the sync does).
   */
  private async syncs(mirror: NonNullable<ListenEngine['mirror']>, signal: AbortSignal): Promise<void> {
    let synced = 0;
    let reported = false;
    for (;;) {
      await this.opts.clock.sleep(MIRROR_SYNC_MS, signal);
      if (signal.aborted) return;
      const applied = mirror.hook.counts.applied + mirror.hook.counts.unplaced;
      if (applied === synced) continue;
      try {
        mirror.store.sync();
        synced = applied;
        reported = false;
      } catch (err) {
        if (!reported) this.emit({ type: 'error', message: `cannot sync the mirror to the disk: ${(err as Error).message}` });
        reported = true;
      }
    }
  }

  /** The listener is gone from the mirror, which is synced and closed; a failure is reported (unless `quiet`), the run still ends. */
  private closeMirror(quiet = false): void {
    const mirror = this.mirror;
    if (!mirror) return;
    try {
      mirror.store.listenerGone(mirror.since);
      mirror.store.sync();
    } catch (err) {
      if (!quiet) this.emit({ type: 'error', message: `cannot mark the listener gone in the mirror: ${(err as Error).message}` });
    } finally {
      mirror.store.close();
    }
  }

  /** The outage's clock moves every second, not only at each try (up to 5 s apart). */
  private async tick(signal: AbortSignal): Promise<void> {
    for (;;) {
      await this.opts.clock.sleep(1000, signal);
      if (signal.aborted) return;
      const [down] = this.outages();
      if (down) this.emit({ type: 'outage', state: down.state });
    }
  }
}
