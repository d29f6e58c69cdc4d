// The tunnel's events as lines for a person: each escaped, each secret redacted.
import type { Context } from '../../context.js';
import { noticeText } from '../../io/notice.js';
import type { Status } from '../../io/status.js';
import { formatDuration } from '../../units.js';
import type { TunnelEvent } from '../../webhook/tunnel/tunnel.js';

/** Where the tunnel's lines go. */
interface TunnelOutput {
  status: Status;
  /** Raw stderr: lines that must show even under --quiet (the URL to paste). */
  stderr: (line: string) => void;
  verbose: boolean;
  /** Between two checks of a working URL, for the warning of an unreachable one. */
  checkEveryMs: number;
  /** The public URL or its state changed: the live status is redrawn. */
  changed(state: string, url: string): void;
}

/** The lines of the tunnel's events for a person: each escaped, each secret redacted. */
export function tunnelRenderer(ctx: Context, name: string, out: TunnelOutput): (e: TunnelEvent) => void {
  // Each line escaped on its own; a block of several goes out in one write, so nothing lands inside it.
  const line = (...texts: string[]) => out.stderr(texts.map((text) => `${noticeText(ctx.secrets, text)}\n`).join(''));
  return (event) => {
    switch (event.type) {
      case 'output':
        if (out.verbose) line(`${name} ${event.stream}: ${event.line}`);
        return;
      case 'starting':
        if (event.attempt > 1) out.status.info(`Starting ${name} again (try ${event.attempt}).`);
        return;
      case 'up':
        out.changed('up', event.url);
        if (event.previous !== undefined) {
          line(
            '',
            `>>> The public URL changed: ${event.url}`,
            `>>> Paste it into Card Sources → Webhook URL (it was ${event.previous}).`,
            '>>> Until then the service keeps retrying deliveries to the old URL (spec 6: no retry limit), so none is lost.',
            '',
          );
        } else if (event.again) out.status.info(`Tunnel back up at the same URL: ${event.url} (nothing to change in Card Sources).`);
        else line(`Public URL: ${event.url} : paste this URL into Card Sources → Webhook URL.`);
        return;
      case 'reachable':
        out.changed('reachable', event.url);
        out.status.info(`${event.recovered ? 'reachable again' : 'reachable'} through ${event.url}: ${Math.round(event.ms)} ms`);
        return;
      case 'unreachable':
        out.changed('unreachable', event.url);
        // A name this machine cannot resolve says little about the service, which resolves it on its own.
        out.status.warn(
          `not reachable through ${event.url}: ${event.reason}.${/ENOTFOUND|EAI_AGAIN/.test(event.reason) ? " The name does not resolve here (a new tunnel's name can take a while, and a resolver may remember the miss); the service looks it up on its own." : ''} The tunnel stays up and is checked again every ${formatDuration(out.checkEveryMs)}; the service retries each delivery until it arrives.`,
        );
        return;
      case 'down':
        out.changed('down', '');
        out.status.warn(`tunnel down: ${event.reason}; starting ${name} again in ${formatDuration(event.restartInMs)}.`);
        return;
    }
  };
}
