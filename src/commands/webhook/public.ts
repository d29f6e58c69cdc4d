// `webhook listen --tunnel` and `--public-url`: the flags as a plan, the tool found on PATH, and the tunnel's
// events as lines for a person. The tunnel engine itself is webhook/tunnel/.
import type { Context } from '../../context.js';
import { CardboardError, UsageError } from '../../errors.js';
import { isLoopbackHost } from '../../http/url.js';
import { noticeText } from '../../io/notice.js';
import type { Status } from '../../io/status.js';
import { formatDuration } from '../../units.js';
import { AUTO_ORDER, INSTALL, parseSshTarget, type ToolName, type TunnelTool, cloudflared, ngrok, ssh } from '../../webhook/tunnel/tools.js';
import { DeliveryClient } from '../../webhook/client.js';
import type { Listener } from '../../webhook/listener.js';
import { publicUrlCheck } from '../../webhook/tunnel/check.js';
import { startTool } from '../../webhook/tunnel/child.js';
import { Tunnel, type TunnelEvent, TunnelStartError, type TunnelTiming } from '../../webhook/tunnel/tunnel.js';

/** Which tunnel to start: the first tool found, a named one, or ssh to the user's server. */
export type TunnelChoice = { tool: 'auto' } | { tool: 'cloudflared' | 'ngrok' } | { tool: 'ssh'; destination: string; remotePort?: number };

/** `--tunnel [tool]` as a choice; commander gives `true` for the flag without a value. */
export function parseTunnel(value: string | true): TunnelChoice {
  if (value === true) return { tool: 'auto' };
  if (value === 'cloudflared' || value === 'ngrok') return { tool: value };
  if (value === 'ssh' || value.startsWith('ssh:')) {
    const target = parseSshTarget(value);
    if (!target) throw new UsageError(`--tunnel ${value}: name your server as ssh:[user@]host[:remote-port]`, { hint: 'For example --tunnel ssh:deploy@hooks.example.com:8787 --public-url https://hooks.example.com/' });
    return { tool: 'ssh', ...target };
  }
  throw new UsageError(`--tunnel: unknown tool "${value}"`, { hint: 'Use cloudflared, ngrok or ssh:[user@]host[:remote-port], or --tunnel alone for the first of cloudflared and ngrok found on PATH.' });
}

/** The listen flags a public URL depends on. */
export interface PublicFlags {
  tunnel?: TunnelChoice;
  publicUrl?: string;
  verify: boolean;
  host: string;
  port: number;
}

/**
 * What a public listener refuses (exit 2, before anything starts): no key check, a tunnel to a listener
 * that is not on loopback, a quick tunnel with a URL of the user's, ssh without the URL it cannot print.
 */
export function checkPublicFlags(f: PublicFlags): void {
  const what = f.tunnel ? '--tunnel' : '--public-url';
  if (!f.verify) {
    throw new UsageError(`--no-verify cannot be used with ${what}: anyone on the internet could post deliveries to a public URL.`, {
      hint: 'Drop --no-verify; give the signing key (CARDBOARD_SIGNING_KEY, --signing-key-stdin or `cardboard board set-signing-key`).',
    });
  }
  if (!f.tunnel) return;
  if (!isLoopbackHost(f.host.replace(/^\[|\]$/g, ''))) {
    throw new UsageError(`--tunnel needs the listener on loopback (--host ${f.host} would also expose it to the network).`, { hint: 'Drop --host: the tunnel reaches the listener on 127.0.0.1.' });
  }
  if (f.tunnel.tool === 'ssh') {
    if (!f.publicUrl) throw new UsageError('--tunnel ssh needs --public-url: ssh cannot tell where your server exposes the tunnel.', { hint: 'Add --public-url https://your-server.example/ (the address your server forwards to the remote port).' });
    if (f.tunnel.remotePort === undefined && f.port === 0) throw new UsageError('--tunnel ssh with --port 0 needs the remote port: --tunnel ssh:[user@]host:REMOTE_PORT');
  } else if (f.publicUrl) {
    throw new UsageError(`--public-url cannot be used with --tunnel ${f.tunnel.tool}: its URL is the one ${f.tunnel.tool === 'auto' ? 'the tool' : f.tunnel.tool} prints.`, {
      hint: 'Use --public-url alone for a tunnel or proxy you run yourself, or with --tunnel ssh:….',
    });
  }
}

/** A tunnel tool found on PATH: its name and the executable that will run. */
export interface FoundTool {
  name: ToolName;
  file: string;
}

/** Find the chosen tool on PATH (`which`, loaded only here); a UsageError names how to install it. */
export async function findTool(choice: TunnelChoice, env: NodeJS.ProcessEnv): Promise<FoundTool> {
  const { default: which } = await import('which');
  const find = (name: ToolName) => which.sync(name, { nothrow: true, path: env.PATH ?? '' }) ?? undefined;
  if (choice.tool === 'auto') {
    for (const name of AUTO_ORDER) {
      const file = find(name);
      if (file) return { name, file };
    }
    throw new UsageError('--tunnel: neither cloudflared nor ngrok is on PATH.', {
      hint: `Install one: ${INSTALL.cloudflared}; or ${INSTALL.ngrok}. Or use --tunnel ssh:user@host with --public-url, or --public-url alone for your own tunnel.`,
    });
  }
  const file = find(choice.tool);
  if (file) return { name: choice.tool, file };
  const install = choice.tool === 'ssh' ? 'the OpenSSH client (e.g. `apt install openssh-client`)' : INSTALL[choice.tool];
  throw new UsageError(`--tunnel ${choice.tool}: ${choice.tool} is not on PATH.`, { hint: `Install ${install}.` });
}

/** The tool's arguments for the listener at host:port. */
export function tunnelTool(choice: TunnelChoice, found: FoundTool, host: string, port: number): TunnelTool {
  if (choice.tool === 'ssh') return ssh(choice.destination, choice.remotePort ?? port, host, port);
  return found.name === 'ngrok' ? ngrok(host, port) : cloudflared(host, port);
}

/** The tool's environment: the user's, without cardboard's own secrets (CARDBOARD_TOKEN, CARDBOARD_SIGNING_KEY…). */
export function toolEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) if (!name.startsWith('CARDBOARD_')) out[name] = value;
  return out;
}

/** The tunnel's start failed: exit 1, with what the tool said and where to look. */
export function startFailure(name: string, reason: string): CardboardError {
  return new CardboardError(`--tunnel ${name}: the tunnel did not come up: ${reason}`, {
    hint: name === 'ngrok' && /authtoken|ERR_NGROK_4018/i.test(reason)
      ? 'Run `ngrok config add-authtoken <token>` once (cardboard never asks for or stores it), or use --tunnel cloudflared.'
      : `Run with --verbose to see everything ${name} printed.`,
  });
}

/** What runTunnel needs from the listen command. */
export interface TunnelRun {
  choice: TunnelChoice | undefined;
  /** The tool found on PATH; none with --public-url alone. */
  found: FoundTool | undefined;
  publicUrl: string | undefined;
  host: string;
  path: string;
  /** The listener, started: its port, and the test deliveries it recognises. */
  listener: Listener;
  /** The signing key the listener verifies, which the test delivery carries. */
  key: string;
  timing: TunnelTiming;
  /** Stops the tunnel (the tool ends before the promise resolves). */
  signal: AbortSignal;
  output: Omit<TunnelOutput, 'checkEveryMs'>;
}

/**
 * Run the tunnel (or only check --public-url) until `signal`, its events rendered for a person. Rejects with
 * a CardboardError (exit 1) when the tunnel never came up.
 */
export async function runTunnel(ctx: Context, r: TunnelRun): Promise<void> {
  const name = r.found?.name ?? 'your tunnel';
  const client = new DeliveryClient(1);
  const tunnel = new Tunnel({
    tool: r.found && r.choice ? tunnelTool(r.choice, r.found, r.host, r.listener.port) : undefined,
    file: r.found?.file,
    path: r.path,
    publicUrl: r.publicUrl,
    check: publicUrlCheck(r.listener, r.key, client),
    start: (file, args, onLine) => startTool(file, args, onLine, toolEnv(ctx.env)),
    clock: ctx.clock,
    timing: r.timing,
    signal: r.signal,
    onEvent: tunnelRenderer(ctx, name, { ...r.output, checkEveryMs: r.timing.checkEveryMs }),
  });
  try {
    await tunnel.run();
  } catch (err) {
    throw err instanceof TunnelStartError ? startFailure(name, err.message) : err;
  } finally {
    await client.close();
  }
}

/** Where the tunnel's lines go. */
export interface TunnelOutput {
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
  return (e) => {
    switch (e.type) {
      case 'output':
        if (out.verbose) line(`${name} ${e.stream}: ${e.line}`);
        return;
      case 'starting':
        if (e.attempt > 1) out.status.info(`Starting ${name} again (try ${e.attempt}).`);
        return;
      case 'up':
        out.changed('up', e.url);
        if (e.previous !== undefined) {
          line(
            '',
            `>>> The public URL changed: ${e.url}`,
            `>>> Paste it into Card Sources → Webhook URL (it was ${e.previous}).`,
            '>>> Until then the service keeps retrying deliveries to the old URL (spec 6: no retry limit), so none is lost.',
            '',
          );
        } else if (e.again) out.status.info(`Tunnel back up at the same URL: ${e.url} (nothing to change in Card Sources).`);
        else line(`Public URL: ${e.url} : paste this URL into Card Sources → Webhook URL.`);
        return;
      case 'reachable':
        out.changed('reachable', e.url);
        out.status.info(`${e.recovered ? 'reachable again' : 'reachable'} through ${e.url}: ${Math.round(e.ms)} ms`);
        return;
      case 'unreachable':
        out.changed('unreachable', e.url);
        // A name this machine cannot resolve says little about the service, which resolves it on its own.
        out.status.warn(
          `not reachable through ${e.url}: ${e.reason}.${/ENOTFOUND|EAI_AGAIN/.test(e.reason) ? " The name does not resolve here (a new tunnel's name can take a while, and a resolver may remember the miss); the service looks it up on its own." : ''} The tunnel stays up and is checked again every ${formatDuration(out.checkEveryMs)}; the service retries each delivery until it arrives.`,
        );
        return;
      case 'down':
        out.changed('down', '');
        out.status.warn(`tunnel down: ${e.reason}; starting ${name} again in ${formatDuration(e.restartInMs)}.`);
        return;
    }
  };
}
