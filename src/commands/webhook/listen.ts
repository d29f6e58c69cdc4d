import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { resolveSelection } from '../../config/index.js';
import type { Context, ContextRef } from '../../context.js';
import { AuthError, CardboardError, UsageError } from '../../errors.js';
import { childStop, whenAborted } from '../../interrupt.js';
import { createLiveLine, type LivePart } from '../../io/live-line.js';
import { createStatus } from '../../io/status.js';
import { terminalJson } from '../../io/terminal-json.js';
import { shownDelivery, viewJson, viewLinePieces, withTail } from '../../webhook/delivery.js';
import { CardStates } from '../../webhook/changes.js';
import { readHistory } from '../../webhook/history.js';
import { LARGE_BODY } from '../../webhook/large-lines.js';
import { cursorPath, type ForwardEvent } from '../../webhook/forwarder.js';
import { reachesListener, TIMEOUTS_ENV, timeoutsFromEnv } from '../../webhook/limits.js';
import { Listener, type ListenerEvent, SelfForwardError } from '../../webhook/listener.js';
import type { RecordFile } from '../../webhook/record-file.js';
import { lockRecord, openRecord } from './record-open.js';
import { TIMING_ENV, timingFromEnv } from '../../webhook/tunnel/tunnel.js';
import { checkPublicFlags, findTool, type FoundTool, parseTunnel, runTunnel, type TunnelChoice } from './public.js';
import { type Duration, formatDuration, parseInteger, parsePort, parseSize, readDuration } from '../../units.js';
import { KEY_TRANSPORT_HELP, loadSigningKey, noKeyHint, signingKeyStdinOption } from './key.js';
import { batchedOutput } from './batched-output.js';
import { changeJsonTail, deliveryLine, LINE_PARSE_MAX_BYTES, notForwardedText, refusedTotal, rejectLine, resumedForwardText, spoolKeptText, summaryLine } from './render.js';
import { ForwardOutage } from './outage.js';
import { httpUrl } from './url.js';
import { type InspectPlan, inspectorLine, inspectPlan, makeInspector, startInspector } from './inspect.js';

/** Options of `webhook listen`, as plain data. */
export interface WebhookListenOptions {
  port: number;
  host: string;
  path: string;
  signingKeyStdin: boolean;
  forwardTo?: string;
  /** How long the app may take per forward, as the user wrote it. */
  forwardTimeout: Duration;
  record?: string;
  json: boolean;
  maxBody: number;
  maxConnections: number;
  verify: boolean;
  /** Start a tunnel to make the listener public. */
  tunnel?: TunnelChoice;
  /** The public URL of the user's own tunnel or proxy (or of the ssh server): printed and checked. */
  publicUrl?: string;
  /** Open the local inspector page on these ports (--inspect). */
  inspect?: InspectPlan;
}

/**
 * After Ctrl-C, how long deliveries in flight may finish (their senders may already hold a 200) and the
 * record file be flushed before the run stops regardless; the forward in flight is sent again on resume.
 */
const STOP_GRACE_MS = 2000;

/** Register `webhook listen`. */
export function webhookListenCommand(parent: Command, ctx: ContextRef, run = runWebhookListen): Command {
  return parent
    .command('listen')
    .description('Receive webhook deliveries: verify, answer 200 at once, print, record, forward')
    .option('--port <port>', 'port to listen on (0: any free port)', '8787')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--path <path>', 'the only path served; others get 404', '/')
    .addOption(signingKeyStdinOption())
    .option('--forward-to <url>', "re-send each delivery to your app, exact bytes and headers, in order, until it answers 2xx")
    .option('--forward-timeout <duration>', 'how long your app may take per forward, e.g. 30s or 2m', '30s')
    .option('--record <file.jsonl>', 'append every verified delivery to this file before answering 200')
    .option('--json', 'print one JSON object per delivery (also when stdout is not a terminal)')
    .option('--max-body <size>', 'largest body accepted; bigger gets 413', '1mb')
    .option('--max-connections <n>', 'open connections at most; at the cap the oldest idle one is closed', '128')
    .option('--no-verify', 'accept deliveries without checking x-signingKey (unsafe; refused with a public URL)')
    .option('--tunnel [tool]', 'make the listener reachable from the internet: cloudflared, ngrok or ssh:[user@]host[:remote-port] (alone: the first of cloudflared, ngrok on PATH)')
    .option('--inspect [port]', 'open a local page (127.0.0.1 only) to watch, filter and replay deliveries; default port 4040, or the next free up to 4060')
    .option('--public-url <url>', 'the public URL of a tunnel or proxy you run (with --tunnel ssh: where your server exposes it); checked with a test delivery')
    .addHelpText('after', `
With --tunnel the tool runs as cardboard's child and ends with it; its URL (plus --path) is printed to paste
into Card Sources and checked with a signed test delivery (never recorded or forwarded); the tool is started
again if it ends or stops forwarding. --verbose shows what it prints.

Each delivery is shown as what it changed on its card, against the card's last delivery (the record file's
at start): Status: Open → Done, new card, deleted, a comment; --json adds change, cardId and changes.

Only POST is a delivery (else 405). Idle connections close after 10 s, a request must be in within 30 s
(CARDBOARD_WEBHOOK_TIMEOUTS=idle=10s,headers=15s,request=30s). --forward-to the listener itself is refused.
${KEY_TRANSPORT_HELP}

Examples:
  $ CARDBOARD_SIGNING_KEY="$SIGNING_KEY" cardboard webhook listen --forward-to http://localhost:3000/hooks --record hooks.jsonl
  $ cardboard webhook listen --tunnel cloudflared --record hooks.jsonl --inspect
  $ cardboard webhook listen --signing-key-stdin --port 9000 --json < signing-key.txt`)
    .action(async (o: Record<string, string | boolean | undefined>) => {
      const path = String(o.path);
      if (!path.startsWith('/')) throw new UsageError(`--path must start with "/": ${path}`);
      const tunnel = o.tunnel === undefined ? undefined : parseTunnel(o.tunnel as string | true);
      // The check sends the signing key to this URL: plain http:// only to loopback unless --insecure.
      const publicUrl = o.publicUrl === undefined ? undefined : httpUrl(String(o.publicUrl), '--public-url', { insecure: ctx().globals.insecure });
      const port = parsePort(String(o.port));
      const verify = o.verify !== false;
      if (tunnel || publicUrl) checkPublicFlags({ tunnel, publicUrl, verify, host: String(o.host), port });
      await run(ctx(), {
        port,
        host: String(o.host),
        path,
        signingKeyStdin: o.signingKeyStdin === true,
        // The forwarder signs each forward with the key: plain http:// only to loopback unless --insecure.
        forwardTo: o.forwardTo === undefined ? undefined : httpUrl(String(o.forwardTo), '--forward-to', { insecure: ctx().globals.insecure }),
        forwardTimeout: readDuration(String(o.forwardTimeout), '--forward-timeout'),
        record: o.record === undefined ? undefined : String(o.record),
        json: o.json === true,
        maxBody: parseSize(String(o.maxBody), '--max-body'),
        maxConnections: parseInteger(String(o.maxConnections), '--max-connections', 1),
        verify,
        tunnel,
        publicUrl,
        inspect: o.inspect === undefined ? undefined : inspectPlan(o.inspect as string | true),
      });
    });
}

function selfForward(url: string, port: number): UsageError {
  return new UsageError(`--forward-to ${url} is this listener itself (port ${port}): every delivery would be forwarded back to it for ever.`, {
    hint: "Point --forward-to at your app's address, or listen on another --port.",
  });
}

/** Run the listener until SIGINT/SIGTERM, then finish requests in flight, flush and return (the process then ends by the signal, main.ts). */
export async function runWebhookListen(ctx: Context, opts: WebhookListenOptions): Promise<void> {
  const json = opts.json || !ctx.stdout.isTTY;
  const isPublic = opts.tunnel !== undefined || opts.publicUrl !== undefined;
  // While --forward-to is down, and while the listener is public, its state is one line updated in place
  // where delivery lines go (stdout on a terminal, stderr with --json), if that is a terminal; every other
  // write clears it and draws it again.
  const live = (opts.forwardTo || isPublic) && !(json && ctx.globals.quiet) ? createLiveLine(json ? ctx.stderr : ctx.stdout) : undefined;
  const io = live ? { ...ctx, stdout: live.wrap(ctx.stdout), stderr: live.wrap(ctx.stderr) } : ctx;
  const status = createStatus(io);
  // Refused before anything is opened when the port is known; with --port 0 the listener checks once bound.
  if (opts.forwardTo && opts.port !== 0 && reachesListener(opts.forwardTo, opts.host, opts.port)) throw selfForward(opts.forwardTo, opts.port);
  const limits = { ...timeoutsFromEnv(ctx.env[TIMEOUTS_ENV]), maxConnections: opts.maxConnections };
  const timing = isPublic ? timingFromEnv(ctx.env[TIMING_ENV]) : undefined;
  // Found before anything opens: a missing tool is a usage error (exit 2), with how to install it.
  const found: FoundTool | undefined = opts.tunnel ? await findTool(opts.tunnel, ctx.env) : undefined;
  const signing = await loadSigningKey(ctx, opts.signingKeyStdin, 'listen');
  if (opts.verify && !signing) {
    throw new AuthError('no webhook signing key: refusing to accept unverified deliveries (spec 6)', { hint: `${await noKeyHint(ctx)}${isPublic ? '' : ' Or pass --no-verify to accept anything.'}` });
  }
  // Forwarding always goes through a file so nothing acknowledged waits only in memory.
  const spool = opts.forwardTo && !opts.record ? join(tmpdir(), `cardboard-webhook-${process.pid}-${Date.now()}.jsonl`) : undefined;
  const recordPath = opts.record ?? spool;
  // One listener per record file: two would number their deliveries alike and interleave their lines.
  const lock = opts.record === undefined ? undefined : lockRecord(opts.record);
  let record: RecordFile | undefined;
  try {
    record = recordPath === undefined ? undefined : openRecord(recordPath);
  } catch (err) {
    lock?.release();
    throw err;
  }
  // Scrubbed from what is received (the raw bytes, recorded so) and from what is shown of it decoded.
  const secrets = [...(signing ? [signing.key] : []), ...ctx.secrets, ...(await boardToken(ctx))];
  // The cards' last states, from what the record file holds (a restarted listener goes on where it was).
  const states = new CardStates({ maxBodyBytes: LINE_PARSE_MAX_BYTES, secrets });
  // --inspect: the page shows what the record file holds as history, then each delivery as it comes.
  const inspector = opts.inspect
    ? await makeInspector(ctx, {
        plan: opts.inspect,
        key: opts.verify ? signing?.key : undefined,
        verified: opts.verify,
        forwardTo: opts.forwardTo,
        recording: opts.record !== undefined,
        replayTimeout: opts.forwardTimeout,
        secrets,
      })
    : undefined;
  if (opts.record) readHistory(opts.record, states, inspector && ((d, change) => inspector.add(d, change, { recorded: true })));
  const stdout = batchedOutput(io.stdout);
  const out = stdout.line;
  const tty = ctx.stdout.isTTY === true;
  const outage = opts.forwardTo ? new ForwardOutage(opts.forwardTo) : undefined;
  const onForward = (e: ForwardEvent) => {
    const shown = outage!.next(e, ctx.clock.now());
    const print = json ? status.info : out;
    if (shown.line) print(shown.line);
    if (live) redraw();
    else if (shown.reminder) print(shown.reminder);
  };
  // The live line: the public URL's state and the counters, then the forward outage, if any.
  let publicState: { state: string; url: string } | undefined;
  const redraw = () => {
    if (!live) return;
    const parts: LivePart[] = [];
    if (publicState) parts.push({ state: publicState.state, detail: `${listener.stats.delivered} delivered · ${refusedTotal(listener.stats)} refused`, url: publicState.url || undefined });
    const outagePart = outage?.livePart(ctx.clock.now());
    if (outagePart !== undefined) parts.push(outagePart);
    if (parts.length) live.show(parts);
    else live.clear();
  };
  const onEvent = (e: ListenerEvent) => {
    if (e.type === 'delivery') {
      // Every delivery is shown as what it did to its card, against the card's last delivered state.
      const change = states.apply(e.delivery.body);
      inspector?.add(e.delivery, change, { recorded: false });
      // What is printed is the body decoded: a secret its JSON escapes spell is redacted there too.
      const shown = shownDelivery(e.delivery, secrets);
      if (!json) out(deliveryLine(shown, change));
      else if (shown.body.length >= LARGE_BODY) {
        // A large delivery is written in pieces, never made one string, after the lines before it; but on a
        // terminal, where a person reads it, as one text escaped as every JSON line there (terminalJson).
        stdout.flush();
        const pieces = viewLinePieces(shown, changeJsonTail(change));
        if (tty) io.stdout.write(terminalJson(Buffer.concat([...pieces].map((p) => (typeof p === 'string' ? Buffer.from(p) : p))).toString('utf8')));
        else for (const piece of pieces) io.stdout.write(piece);
        io.stdout.write('\n');
      } else {
        const view = e.view === undefined || shown !== e.delivery ? viewJson(shown, changeJsonTail(change)) : withTail(e.view, changeJsonTail(change));
        out(tty ? terminalJson(view) : view);
      }
    } else if (e.type === 'forward') {
      onForward(e);
      inspector?.forward(e);
    } else if (e.type === 'rejected') status.info(rejectLine(e));
    else if (e.type === 'error') status.warn(e.message);
    else if (e.type === 'looped') status.warn(`a delivery to ${e.path} came back from this listener's own forward: answered 200, not recorded or forwarded again (check --forward-to)`);
    if (e.type === 'delivery' || e.type === 'rejected') {
      if (publicState) redraw();
      inspector?.stats(listener.stats.delivered, refusedTotal(listener.stats));
    }
  };
  const listener = new Listener({
    host: opts.host,
    port: opts.port,
    path: opts.path,
    key: opts.verify ? signing?.key : undefined,
    secrets,
    maxBody: opts.maxBody,
    limits,
    record,
    forward: opts.forwardTo ? { url: opts.forwardTo, timeout: opts.forwardTimeout } : undefined,
    onEvent,
  });
  let url: string;
  let inspectorUrl: string | undefined;
  try {
    // Before the listener: a port the inspector cannot have ends the run before any delivery is accepted.
    if (inspector) inspectorUrl = await startInspector(inspector, opts.inspect!);
    url = await listener.start();
  } catch (err) {
    await inspector?.stop();
    await record?.close();
    lock?.release();
    if (err instanceof CardboardError) throw err;
    if (err instanceof SelfForwardError) throw selfForward(err.url, err.port);
    const code = (err as NodeJS.ErrnoException).code;
    throw new CardboardError(`cannot listen on ${opts.host}:${opts.port} (${code ?? (err as Error).message})`, { hint: code === 'EADDRINUSE' ? 'Pick another --port (0: any free port).' : undefined, cause: err });
  }
  // Catch Ctrl-C before the ready line: a supervisor may send SIGINT as soon as it reads it.
  const undrain = ctx.cancel.drainOn({ graceMs: STOP_GRACE_MS });
  // First line on stderr, printed even with --quiet: where to point the board (spec 2.4, Webhook URL). A
  // public listener's URL to paste is the public one, printed when the tunnel is up.
  if (found) io.stderr.write(`Listening on ${url} (loopback; starting ${found.name} to make it public).\n`);
  else if (opts.publicUrl) io.stderr.write(`Listening on ${url} (public as ${opts.publicUrl}; checking it with a test delivery).\n`);
  else io.stderr.write(`Listening on ${url} : paste this URL into Card Sources → Webhook URL (the service must be able to reach it).\n`);
  // The page's URL holds its token: written here once, even with --quiet, and nowhere else.
  if (inspectorUrl) {
    io.stderr.write(inspectorLine(inspectorUrl));
    inspector!.stats(listener.stats.delivered, refusedTotal(listener.stats));
  }
  if (!opts.verify) status.warn('NOT VERIFYING x-signingKey (--no-verify): anyone who can reach this port can post deliveries.');
  else if (signing) status.info(`Verifying x-signingKey with the key from ${signing.source}.`);
  if (opts.record) status.info(`Recording to ${opts.record}.`);
  else if (spool) status.info(`Spooling deliveries for forwarding in ${spool} (removed at exit once all are forwarded).`);
  const fwd = listener.forwarder;
  if (fwd && opts.forwardTo) {
    status.info(`Forwarding to ${opts.forwardTo} (timeout ${formatDuration(opts.forwardTimeout)}).`);
    if (fwd.resumed > 0) status.info(resumedForwardText(fwd.resumed));
    if (fwd.skipped > 0) status.info(notForwardedText(fwd.skipped, opts.record!, opts.forwardTo));
  }
  // The live line's "down for" moves every second, not only at each try (up to 5 s apart).
  const tick = () => {
    if (outage?.down) redraw();
  };
  const ticker = live && opts.forwardTo ? setInterval(tick, 1000).unref() : undefined;
  // Stopped by Ctrl-C or SIGTERM (drain), or by a tunnel that never came up.
  const stop = childStop(ctx.cancel.drain);
  let failure: unknown;
  let tunnelRun: Promise<void> | undefined;
  if (isPublic) {
    tunnelRun = runTunnel(ctx, {
      choice: opts.tunnel,
      found,
      publicUrl: opts.publicUrl,
      host: opts.host,
      path: opts.path,
      listener,
      key: signing!.key,
      timing: timing!,
      signal: stop.signal,
      output: {
        status,
        stderr: (text) => io.stderr.write(text),
        verbose: ctx.globals.verbose === true,
        changed: (state, at) => {
          publicState = { state: `tunnel ${state}`, url: at || publicState?.url || '' };
          redraw();
        },
      },
    }).catch((err: unknown) => {
      failure = err;
      stop.abort('tunnel');
    });
  }
  try {
    await whenAborted(stop.signal);
    await Promise.all([listener.stop(ctx.signal), tunnelRun]);
  } finally {
    await inspector?.stop();
    clearInterval(ticker);
    live?.clear();
    undrain();
    lock?.release();
  }
  stdout.flush();
  const pending = fwd?.pending;
  status.info(summaryLine(listener.stats, pending));
  if (spool && pending === 0) {
    rmSync(spool, { force: true });
    rmSync(cursorPath(spool), { force: true });
  } else if (spool) {
    status.warn(spoolKeptText(pending ?? 0, spool));
  }
  if (failure !== undefined) throw failure;
}

/** The selected board's token, if one is configured: a delivery carrying it must not be recorded with it. */
async function boardToken(ctx: Context): Promise<string[]> {
  try {
    const token = resolveSelection(ctx, await ctx.config.read()).token?.value;
    return token ? [token] : [];
  } catch {
    return [];
  }
}
