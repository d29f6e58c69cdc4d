// How `webhook listen` shows itself: the ready lines, a line (or `--json`) per delivery, the forward tries
// and the outage, the tunnel's lines, the live line, and the summary.
import type { Context } from '../../context.js';
import { createLiveLine, type LivePart } from '../../io/live-line.js';
import { createStatus } from '../../io/status.js';
import { terminalJson } from '../../io/terminal-json.js';
import { type Duration, formatDuration } from '../../units.js';
import { shownDelivery, viewJson, viewLinePieces, withTail } from '../../webhook/delivery.js';
import { forwardLineJson } from '../../webhook/forward-entry.js';
import type { ListenEvent, ListenReady, ListenView } from '../../webhook/listen-engine.js';
import { refusedTotal } from '../../webhook/listener.js';
import { LARGE_BODY } from '../../webhook/large-lines.js';
import { answerLines, shownAnswer } from './answer-render.js';
import { batchedOutput } from './batched-output.js';
import { inspectorLine, replayJson, replayLine } from './inspect.js';
import { outageLive, outageOutput } from './outage-render.js';
import { changeJsonTail, deliveryLine, notForwardedText, rejectLine, resumedForwardText, spoolKeptText, summaryLine } from './render.js';
import { tunnelRenderer } from './tunnel-render.js';

/** What the screen shows besides the engine's events. */
interface ScreenOptions {
  json: boolean;
  /** The tunnel tool that runs, if any, and the user's public URL. */
  toolName?: string;
  publicUrl?: string;
  /** Where the signing key came from; none with --no-verify. */
  keySource?: string;
  verify: boolean;
  record?: string;
  forwardTo?: string;
  /** With filters or several --forward-to: the routes (forward lines then name their URL). */
  routing?: { routes: readonly unknown[] };
  forwardTimeout: Duration;
  /** Shown decoded, with these redacted. */
  secrets: readonly string[];
  /** Between two checks of a working public URL. */
  checkEveryMs: number;
}

/** The screen of one listen run. */
interface ListenScreen {
  /** Whether a live line is drawn (it wants the outage's clock every second). */
  readonly live: boolean;
  ready(r: ListenReady): void;
  show(e: ListenEvent, view: ListenView): void;
  /** The run ended, however: the live line goes. */
  end(): void;
}

/** The screen: delivery lines on stdout, everything else on stderr, a live line where delivery lines go. */
export function listenScreen(ctx: Context, screen: ScreenOptions): ListenScreen {
  const json = screen.json || !ctx.stdout.isTTY;
  const isPublic = screen.toolName !== undefined || screen.publicUrl !== undefined;
  // While --forward-to is down, and while the listener is public, its state is one line updated in place
  // where delivery lines go (stdout on a terminal, stderr with --json), if that is a terminal; every other
  // write clears it and draws it again.
  const forwarding = screen.forwardTo !== undefined || (screen.routing?.routes.length ?? 0) > 0;
  const live = (forwarding || isPublic) && !(json && ctx.globals.quiet) ? createLiveLine(json ? ctx.stderr : ctx.stdout) : undefined;
  const stdoutStream = live ? live.wrap(ctx.stdout) : ctx.stdout;
  const stderr = live ? live.wrap(ctx.stderr) : ctx.stderr;
  const status = createStatus(ctx, stderr);
  const stdout = batchedOutput(stdoutStream);
  const out = stdout.line;
  const tty = ctx.stdout.isTTY === true;
  let view: ListenView | undefined;
  // The live line: the public URL's state and the counters, then the forward outage, if any.
  let publicState: { state: string; url: string } | undefined;
  const redraw = () => {
    if (!live || !view) return;
    const parts: LivePart[] = [];
    if (publicState) parts.push({ state: publicState.state, detail: `${view.stats.delivered} delivered · ${refusedTotal(view.stats)} refused`, url: publicState.url || undefined });
    for (const { url, state } of view.outages()) parts.push(outageLive(url, state));
    if (parts.length) live.show(parts);
    else live.clear();
  };
  const tunnel = tunnelRenderer(ctx, screen.toolName ?? 'your tunnel', {
    status,
    stderr: (text) => stderr.write(text),
    verbose: ctx.globals.verbose === true,
    checkEveryMs: screen.checkEveryMs,
    changed: (state, at) => {
      publicState = { state: `tunnel ${state}`, url: at || publicState?.url || '' };
      redraw();
    },
  });
  const delivery = (event: Extract<ListenEvent, { type: 'delivery' }>) => {
    // What is printed is the body decoded: a secret its JSON escapes spell is redacted there too.
    const shown = shownDelivery(event.delivery, screen.secrets);
    if (!json) out(deliveryLine(shown, event.change));
    else if (shown.body.length >= LARGE_BODY) {
      // A large delivery is written in pieces, never made one string, after the lines before it; but on a
      // terminal, where a person reads it, as one text escaped as every JSON line there (terminalJson).
      stdout.flush();
      const pieces = viewLinePieces(shown, changeJsonTail(event.change));
      if (tty) stdoutStream.write(terminalJson(Buffer.concat([...pieces].map((p) => (typeof p === 'string' ? Buffer.from(p) : p))).toString('utf8')));
      else for (const piece of pieces) stdoutStream.write(piece);
      stdoutStream.write('\n');
    } else {
      const text = event.view === undefined || shown !== event.delivery ? viewJson(shown, changeJsonTail(event.change)) : withTail(event.view, changeJsonTail(event.change));
      out(tty ? terminalJson(text) : text);
    }
  };
  return {
    live: live !== undefined,
    ready(ready) {
      // First line on stderr, printed even with --quiet: where to point the board (spec 2.4, Webhook URL). A
      // public listener's URL to paste is the public one, printed when the tunnel is up.
      if (screen.toolName) stderr.write(`Listening on ${ready.url} (loopback; starting ${screen.toolName} to make it public).\n`);
      else if (screen.publicUrl) stderr.write(`Listening on ${ready.url} (public as ${screen.publicUrl}; checking it with a test delivery).\n`);
      else stderr.write(`Listening on ${ready.url} : paste this URL into Card Sources → Webhook URL (the service must be able to reach it).\n`);
      // The page's URL holds its token: written here once, even with --quiet, and nowhere else.
      if (ready.inspectorUrl) stderr.write(inspectorLine(ready.inspectorUrl, ready.inspectorTokenFile, ready.inspectorMovedFrom));
      if (!screen.verify) status.warn('NOT VERIFYING x-signingKey (--no-verify): anyone who can reach this port can post deliveries.');
      else if (screen.keySource) status.info(`Verifying x-signingKey with the key from ${screen.keySource}.`);
      if (screen.record) status.info(`Recording to ${screen.record}.`);
      else if (ready.spool) status.info(`Spooling deliveries for forwarding in ${ready.spool} (removed at exit once all are forwarded).`);
      if (ready.mirror) status.info(`Applying each delivery to the mirror ${ready.mirror} before its 200.`);
      if (ready.filter) status.info(`Only deliveries that match ${ready.filter} are printed${forwarding ? ' and forwarded' : ''}.`);
      for (const route of ready.routes) {
        status.info(`Forwarding to ${route.url}${route.filter ? ` what matches ${route.filter}` : ''} (timeout ${formatDuration(screen.forwardTimeout)}).`);
        if (route.resumed > 0) status.info(resumedForwardText(route.resumed));
        if (route.skipped > 0) status.info(notForwardedText(route.skipped, screen.record!, route.url));
      }
    },
    show(event, current) {
      view = current;
      switch (event.type) {
        case 'delivery':
          delivery(event);
          break;
        case 'rejected':
          status.info(rejectLine(event));
          break;
        case 'forward': {
          // The answer without the secrets, whatever the app echoed (the forward line shows its start).
          const answer = shownAnswer(event.answer, screen.secrets);
          const shown = outageOutput(event.url, { ...event, answer: answer.answer }, event.outage, screen.routing !== undefined);
          const print = json ? status.info : out;
          if (shown.line) print(shown.line);
          // The app's answer: exact in a JSON line of its own (the record file's forward entry) with --json,
          // and with --verbose under the line of the try, wherever that goes, escaped.
          if (json) out(tty ? terminalJson(forwardLineJson(event.entry)) : forwardLineJson(event.entry));
          if (shown.line && ctx.globals.verbose) for (const line of answerLines(answer)) print(line);
          if (live) redraw();
          else if (shown.reminder) print(shown.reminder);
          return;
        }
        case 'replay': {
          // Where deliveries go: a line on a terminal, one JSON line with --json.
          const text = json ? replayJson(event) : replayLine(event);
          out(json && tty ? terminalJson(text) : text);
          break;
        }
        case 'outage':
          return redraw();
        case 'tunnel':
          return tunnel(event.tunnel);
        case 'error':
          return status.warn(event.message);
        case 'looped':
          return status.warn(`a delivery to ${event.path} came back from this listener's own forward: answered 200, not recorded or forwarded again (check --forward-to)`);
        case 'stopped':
          live?.clear();
          stdout.flush();
          status.info(summaryLine(event.stats, event.pending, event.mirror));
          if (event.spool?.kept) status.warn(spoolKeptText(event.pending ?? 0, event.spool.path));
          return;
      }
      if (publicState) redraw();
    },
    end() {
      live?.clear();
    },
  };
}
