import type { Command } from 'commander';
import { type Context, type ContextRef, ownSecrets, type SecretsRef } from '../../context.js';
import type { SecretKeeper } from '../../redact.js';
import { AuthError, UsageError } from '../../errors.js';
import { httpUrl } from '../../http/url.js';
import { childStop } from '../../interrupt.js';
import { type Duration, parseInteger, parsePort, parseSize, readDuration } from '../../units.js';
import { ListenEngine, refuseSelfForward } from '../../webhook/listen-engine.js';
import { TIMEOUTS_ENV, timeoutsFromEnv } from '../../webhook/limits.js';
import type { InspectPlan } from '../../webhook/inspector/open.js';
import { findTool, type TunnelChoice } from '../../webhook/tunnel/public.js';
import { TIMING_ENV, timingFromEnv } from '../../webhook/tunnel/tunnel.js';
import { inspectPlan } from './inspect.js';
import { KEY_TRANSPORT_HELP, loadSigningKey, noKeyHint, receivedSecrets, signingKeyStdinOption } from './key.js';
import { listenMirror } from './listen-mirror.js';
import { listenScreen } from './listen-render.js';
import { type FlagRouting, resolveRouting, ROUTES_HELP, routeOptionParsers, routesFromFlags } from './routes-flags.js';
import { checkPublicFlags, parseTunnel } from './tunnel-flags.js';

/** Options of `webhook listen`, as plain data. */
export interface WebhookListenOptions {
  port: number;
  host: string;
  path: string;
  signingKeyStdin: boolean;
  forwardTo?: string;
  /** Instead of `forwardTo`: the filters (--changed, --where) and every --forward-to with its own (routes-flags.ts). */
  routing?: FlagRouting;
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
  /** Apply each delivery to the selected board's mirror before its 200. */
  mirror?: boolean;
}

/**
 * After Ctrl-C, how long deliveries in flight may finish (their senders may already hold a 200) and the
 * record file be flushed before the run stops regardless; the forward in flight is sent again on resume.
 */
const STOP_GRACE_MS = 2000;

/** Register `webhook listen`. */
export function webhookListenCommand(parent: Command, ctx: ContextRef, run = runWebhookListen, secrets: SecretsRef = ownSecrets): Command {
  const routeFlag = routeOptionParsers();
  return parent
    .command('listen')
    .description('Receive webhook deliveries: verify, answer 200 at once, print, record, forward')
    .option('--port <port>', 'port to listen on (0: any free port)', '8787')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--path <path>', 'the only path served; others get 404', '/')
    .addOption(signingKeyStdinOption())
    .option('--forward-to <url>', 're-send each delivery to your app, exact bytes and headers, in order, until it answers 2xx (repeatable: each with the filters that follow it)', routeFlag.forwardTo)
    .option('--where <expr>', 'print and forward only deliveries whose card has Field=value, Field!=value, Field~text, Field<n or Field>n (repeatable: all must hold)', routeFlag.where)
    .option('--changed <field>', 'print and forward only deliveries that changed this field of their card (repeatable: any of them)', routeFlag.changed)
    .option('--forward-timeout <duration>', 'how long your app may take per forward, e.g. 30s or 2m', '30s')
    .option('--record <file.jsonl>', 'append every verified delivery to this file before answering 200')
    .option('--mirror', "apply every verified delivery to the selected board's mirror (a SQLite file, or PostgreSQL with CARDBOARD_MIRROR=postgres://…) before answering 200")
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
at start, else the mirror's card with --mirror): Status: Open → Done, new card, deleted, a comment; --json
adds change, cardId and changes. With --mirror a delivery the mirror cannot place (not a card, a delete or
a comment) is kept in it and counted, and changes no card.

Only POST is a delivery (else 405). Idle connections close after 10 s, a request must be in within 30 s
(CARDBOARD_WEBHOOK_TIMEOUTS=idle=10s,headers=15s,request=30s). --forward-to the listener itself is refused.
${KEY_TRANSPORT_HELP}

${ROUTES_HELP}

Examples:
  $ CARDBOARD_SIGNING_KEY="$SIGNING_KEY" cardboard webhook listen --forward-to http://localhost:3000/hooks --record hooks.jsonl
  $ cardboard webhook listen --record hooks.jsonl --forward-to http://localhost:3000/done --where Status=Done --forward-to http://localhost:3001/owner --changed Owner
  $ cardboard webhook listen --tunnel cloudflared --record hooks.jsonl --inspect`)
    .action(async (flags: Record<string, string | boolean | undefined> & Parameters<typeof routesFromFlags>[0]) => {
      const path = String(flags.path);
      if (!path.startsWith('/')) throw new UsageError(`--path must start with "/": ${path}`);
      const tunnel = flags.tunnel === undefined ? undefined : parseTunnel(flags.tunnel as string | true);
      // The check sends the signing key to this URL: plain http:// only to loopback unless --insecure.
      const publicUrl = flags.publicUrl === undefined ? undefined : httpUrl(String(flags.publicUrl), '--public-url', { insecure: ctx().globals.insecure });
      const port = parsePort(String(flags.port));
      const verify = flags.verify !== false;
      const { forwardTo, routing } = routesFromFlags(flags, ctx().globals.insecure);
      if (tunnel || publicUrl) checkPublicFlags({ tunnel, publicUrl, verify, host: String(flags.host), port });
      await run(ctx(), {
        port,
        host: String(flags.host),
        path,
        signingKeyStdin: flags.signingKeyStdin === true,
        forwardTo,
        routing,
        forwardTimeout: readDuration(String(flags.forwardTimeout), '--forward-timeout'),
        record: flags.record === undefined ? undefined : String(flags.record),
        json: flags.json === true,
        maxBody: parseSize(String(flags.maxBody), '--max-body'),
        maxConnections: parseInteger(String(flags.maxConnections), '--max-connections', 1),
        verify,
        tunnel,
        publicUrl,
        inspect: flags.inspect === undefined ? undefined : inspectPlan(flags.inspect as string | true),
        mirror: flags.mirror === true,
      }, secrets());
    });
}

/** Run the listener until SIGINT/SIGTERM, then finish requests in flight, flush and return (the process then ends by the signal, main.ts). */
export async function runWebhookListen(ctx: Context, opts: WebhookListenOptions, keeper: SecretKeeper): Promise<void> {
  const isPublic = opts.tunnel !== undefined || opts.publicUrl !== undefined;
  const forward = opts.forwardTo ? { url: opts.forwardTo, timeout: opts.forwardTimeout } : undefined;
  refuseSelfForward(opts.routing ? opts.routing.routes.map((r) => r.url) : forward ? [forward.url] : [], opts);
  // Field names checked before anything opens: an unknown one is a usage error (exit 2).
  const routing = opts.routing && { ...(await resolveRouting(ctx, opts.routing)), timeout: opts.forwardTimeout };
  const limits = { ...timeoutsFromEnv(ctx.env[TIMEOUTS_ENV]), maxConnections: opts.maxConnections };
  const timing = timingFromEnv(isPublic ? ctx.env[TIMING_ENV] : undefined);
  // The board is settled before anything opens: --mirror with none is a usage error (exit 2).
  const mirror = opts.mirror ? await listenMirror(ctx) : undefined;
  // Found before anything opens: a missing tool is a usage error (exit 2), with how to install it.
  const found = opts.tunnel ? await findTool(opts.tunnel, ctx.env) : undefined;
  const signing = await loadSigningKey(ctx, opts.signingKeyStdin, 'listen', keeper);
  if (opts.verify && !signing) {
    throw new AuthError('no webhook signing key: refusing to accept unverified deliveries (spec 6)', { hint: `${await noKeyHint(ctx)}${isPublic ? '' : ' Or pass --no-verify to accept anything.'}` });
  }
  // Scrubbed from what is received (the raw bytes, recorded so) and from what is shown of it decoded.
  const secrets = await receivedSecrets(ctx, signing);
  const screen = listenScreen(ctx, { ...opts, toolName: found?.name, keySource: signing?.source, secrets, checkEveryMs: timing.checkEveryMs });
  const { host, port, path, maxBody, record } = opts;
  const engine = new ListenEngine(
    {
      host, port, path, maxBody, record, limits, forward, routing, secrets, mirror,
      key: opts.verify ? signing?.key : undefined,
      inspect: opts.inspect && { plan: opts.inspect, insecure: ctx.globals.insecure, replayTimeout: opts.forwardTimeout },
      public: isPublic ? { choice: opts.tunnel, found, publicUrl: opts.publicUrl, timing, env: ctx.env } : undefined,
      ticks: screen.live,
    },
    { clock: ctx.clock, onEvent: screen.show },
  );
  const ready = await engine.start();
  // Catch Ctrl-C before the ready line: a supervisor may send SIGINT as soon as it reads it.
  const undrain = ctx.drain.enable({ graceMs: STOP_GRACE_MS });
  try {
    screen.ready(ready);
    // Stopped by Ctrl-C or SIGTERM (drain), or by a tunnel that never came up.
    await engine.run(childStop(ctx.drain.signal), ctx.signal);
  } finally {
    screen.end();
    undrain();
  }
}
