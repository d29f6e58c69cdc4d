// The tunnel tools `webhook listen --tunnel` runs, each as its users run it, and how to read what each prints.
// Only data here: which arguments, which line holds the public URL, which line says why it failed.

/** The tools cardboard knows how to start. */
export type ToolName = 'cloudflared' | 'ngrok' | 'ssh';

/** What one line of a tool's output tells: the public URL, or the reason of a failure (shown if the tool ends). */
export interface ToolLine {
  url?: string;
  error?: string;
}

/** Reads a tool's output line by line; keeps what it needs across lines (cloudflared's framed block). */
type ToolReader = (line: string, stream: 'stdout' | 'stderr') => ToolLine | undefined;

/** A tunnel tool: its name, its arguments to reach the listener, and how its output is read. */
export interface TunnelTool {
  name: ToolName;
  /** The arguments after the executable's name. */
  args: readonly string[];
  /** A fresh reader for one run of the tool. */
  reader(): ToolReader;
  /**
   * Where the URL comes from: the tool's own output (`output`), or the user's --public-url, which cardboard
   * cannot read from the tool (ssh prints nothing): the tunnel counts as up once a check came through it.
   */
  urlFrom: 'output' | 'public-url';
}

/** How to get each tool, for the error that finds none on PATH. */
export const INSTALL: Record<'cloudflared' | 'ngrok', string> = {
  cloudflared: 'cloudflared: https://developers.cloudflare.com/cloudflare-one/connections/connect-networks/downloads/ (no account needed for a quick tunnel)',
  ngrok: 'ngrok: https://ngrok.com/download, then `ngrok config add-authtoken <token>` once',
};

/** The tools `--tunnel` without a value looks for on PATH, in this order. */
export const AUTO_ORDER = ['cloudflared', 'ngrok'] as const;

/** The listener's address as a tool names it: `127.0.0.1:8787`, `[::1]:8787`. */
function address(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** A public URL printed by a tool: an http(s) URL, else nothing (a line that only looks like one). */
function publicUrl(text: string): string | undefined {
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** `2026-11-26T03:10:00Z ERR message`: the level and the message of a cloudflared log line. */
const CLOUDFLARED_LINE = /^\S+\s+(INF|WRN|ERR|FTL|DBG)\s+(.*)$/;

/**
 * cloudflared's quick tunnel: `cloudflared tunnel --url http://127.0.0.1:PORT`. It logs to stderr, each line a
 * timestamp and a level; the URL is the line after "Your quick Tunnel has been created!" inside a framed
 * block (`|  https://….trycloudflare.com  |`). Other lines carry URLs too (the preamble links to the docs),
 * so only the framed line after that sentence counts. Why it failed: an ERR or FTL line, or else the first
 * bare line (the error the command returned, or its usage message).
 */
export function cloudflared(host: string, port: number): TunnelTool {
  return {
    name: 'cloudflared',
    args: ['tunnel', '--url', `http://${address(host, port)}`],
    urlFrom: 'output',
    reader() {
      let created = false;
      // Whether a line said why it failed: an error the command returns is printed bare, without timestamp
      // or level (`failed to request quick Tunnel: … no such host`), sometimes after ERR lines that say more.
      let told = false;
      return (line) => {
        const match = CLOUDFLARED_LINE.exec(line.trim());
        if (!match) {
          const bare = line.trim();
          if (told || bare === '') return undefined;
          told = true;
          return { error: bare };
        }
        const [, level, text] = match as unknown as [string, string, string];
        if (level === 'ERR' || level === 'FTL') {
          told = true;
          return { error: text };
        }
        if (/Your quick Tunnel has been created/i.test(text)) {
          created = true;
          return undefined;
        }
        const framed = /^\|\s*(\S+)\s*\|$/.exec(text);
        if (created && framed) {
          const url = publicUrl(framed[1]!);
          if (url) {
            created = false;
            return { url };
          }
        }
        return undefined;
      };
    },
  };
}

/**
 * ngrok v3: `ngrok http 127.0.0.1:PORT --log stdout --log-format json`, with the user's own configuration and
 * auth token (never asked for, passed or stored here). Each line is a JSON object; `"msg":"started tunnel"`
 * holds `url`; `"lvl":"eror"` or `"crit"` lines hold `err`, whose first line says why (and an ERR_NGROK_ code).
 */
export function ngrok(host: string, port: number): TunnelTool {
  return {
    name: 'ngrok',
    args: ['http', address(host, port), '--log', 'stdout', '--log-format', 'json'],
    urlFrom: 'output',
    reader() {
      // ngrok ends with a plain `ERROR:  …` block on stderr: its first line says why, a later one has the code.
      let block: string | undefined;
      return (line) => {
        let entry: unknown;
        try {
          entry = JSON.parse(line);
        } catch {
          const plain = /^ERROR:\s*(.*)$/.exec(line.trim());
          const text = plain?.[1]?.trim();
          if (!text) return undefined;
          if (block === undefined) {
            block = text;
            return { error: text };
          }
          const code = /^ERR_NGROK_\d+$/.exec(text)?.[0];
          return code && !block.includes(code) ? { error: `${block} (${code})` } : undefined;
        }
        if (typeof entry !== 'object' || entry === null) return undefined;
        const fields = entry as { msg?: unknown; url?: unknown; lvl?: unknown; err?: unknown };
        if (fields.msg === 'started tunnel' && typeof fields.url === 'string') {
          const url = publicUrl(fields.url);
          return url ? { url } : undefined;
        }
        if (fields.lvl === 'eror' || fields.lvl === 'crit') {
          const err = typeof fields.err === 'string' ? fields.err : typeof fields.msg === 'string' ? fields.msg : 'failed';
          const code = /ERR_NGROK_\d+/.exec(err)?.[0];
          const first = err.split(/\r?\n/)[0]!.trim();
          return { error: code && !first.includes(code) ? `${first} (${code})` : first };
        }
        return undefined;
      };
    },
  };
}

/** Keep-alives and no prompts for ssh: a dead link is noticed in under a minute, and nothing waits for a password. */
const SSH_OPTIONS = ['-o', 'ExitOnForwardFailure=yes', '-o', 'ServerAliveInterval=15', '-o', 'ServerAliveCountMax=3', '-o', 'BatchMode=yes'];

/**
 * A reverse tunnel to the user's own server: `ssh -N -T -R REMOTE:127.0.0.1:PORT user@host`. ssh prints no
 * URL; the server exposes its port REMOTE where the user says (--public-url). BatchMode: the tool runs in its
 * own process group, away from the terminal, so it could not ask for a passphrase anyway (use an agent).
 * Whatever ssh prints on stderr is the reason it ended.
 */
export function ssh(destination: string, remotePort: number, host: string, port: number): TunnelTool {
  return {
    name: 'ssh',
    args: ['-N', '-T', '-R', `${remotePort}:${address(host, port)}`, ...SSH_OPTIONS, destination],
    urlFrom: 'public-url',
    reader() {
      return (line, stream) => {
        const text = line.trim();
        return stream === 'stderr' && text !== '' ? { error: text } : undefined;
      };
    },
  };
}

/** `--tunnel ssh:[user@]host[:remote-port]`, split; the remote port is undefined when not given. */
export function parseSshTarget(value: string): { destination: string; remotePort?: number } | undefined {
  const match = /^ssh:([^\s:@/]+@)?([^\s:@/[\]]+|\[[0-9a-fA-F:.]+\])(?::(\d{1,5}))?$/.exec(value);
  if (!match) return undefined;
  const [, user = '', host, port] = match;
  // A destination that starts with `-` would be read by ssh as an option.
  if (host!.startsWith('-') || user.startsWith('-')) return undefined;
  const remotePort = port === undefined ? undefined : Number(port);
  if (remotePort !== undefined && (remotePort < 1 || remotePort > 65535)) return undefined;
  return { destination: `${user}${host!.replace(/^\[|\]$/g, '')}`, remotePort };
}
