// `webhook listen --tunnel` and `--public-url` as flags: the choice of tool, and what a public listener refuses.
import { UsageError } from '../../errors.js';
import { isLoopbackHost } from '../../http/url.js';
import type { TunnelChoice } from '../../webhook/tunnel/public.js';
import { parseSshTarget } from '../../webhook/tunnel/tools.js';

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
export function checkPublicFlags(flags: PublicFlags): void {
  const what = flags.tunnel ? '--tunnel' : '--public-url';
  if (!flags.verify) {
    throw new UsageError(`--no-verify cannot be used with ${what}: anyone on the internet could post deliveries to a public URL.`, {
      hint: 'Drop --no-verify; give the signing key (CARDBOARD_SIGNING_KEY, --signing-key-stdin or `cardboard board set-signing-key`).',
    });
  }
  if (!flags.tunnel) return;
  if (!isLoopbackHost(flags.host.replace(/^\[|\]$/g, ''))) {
    throw new UsageError(`--tunnel needs the listener on loopback (--host ${flags.host} would also expose it to the network).`, { hint: 'Drop --host: the tunnel reaches the listener on 127.0.0.1.' });
  }
  if (flags.tunnel.tool === 'ssh') {
    if (!flags.publicUrl) throw new UsageError('--tunnel ssh needs --public-url: ssh cannot tell where your server exposes the tunnel.', { hint: 'Add --public-url https://your-server.example/ (the address your server forwards to the remote port).' });
    if (flags.tunnel.remotePort === undefined && flags.port === 0) throw new UsageError('--tunnel ssh with --port 0 needs the remote port: --tunnel ssh:[user@]host:REMOTE_PORT');
  } else if (flags.publicUrl) {
    throw new UsageError(`--public-url cannot be used with --tunnel ${flags.tunnel.tool}: its URL is the one ${flags.tunnel.tool === 'auto' ? 'the tool' : flags.tunnel.tool} prints.`, {
      hint: 'Use --public-url alone for a tunnel or proxy you run yourself, or with --tunnel ssh:….',
    });
  }
}
