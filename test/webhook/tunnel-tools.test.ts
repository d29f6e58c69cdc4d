// The tunnel tools' arguments and output readers, on output shaped as the real tools print it: cloudflared's
// zerolog console lines (timestamp, level, message) with the quick tunnel's framed block, and ngrok v3's
// `--log-format json` objects (keys sorted, "lvl" info/warn/eror/crit) with its plain `ERROR:` block on stderr.
// Host names, ids and timestamps are made up; the wording of each line is the tools'.
import { describe, expect, it } from 'vitest';
import { cloudflared, ngrok, parseSshTarget, ssh, type ToolLine, type TunnelTool } from '../../src/webhook/tunnel/tools.js';

/** Every line through one fresh reader: what each line told, in order (lines that told nothing left out). */
function read(tool: TunnelTool, lines: string[], stream: 'stdout' | 'stderr' = 'stderr'): Array<{ line: number } & ToolLine> {
  const reader = tool.reader();
  const out: Array<{ line: number } & ToolLine> = [];
  lines.forEach((line, i) => {
    const told = reader(line, stream);
    if (told) out.push({ line: i, ...told });
  });
  return out;
}

/** What the engine keeps: the first URL, and the last error. */
function outcome(tool: TunnelTool, lines: string[], stream: 'stdout' | 'stderr' = 'stderr'): { url?: string; error?: string } {
  const told = read(tool, lines, stream);
  return { url: told.find((t) => t.url)?.url, error: told.filter((t) => t.error).at(-1)?.error };
}

const cf = cloudflared('127.0.0.1', 8787);
const CF_PREAMBLE = [
  '2026-11-26T03:10:00Z INF Thank you for trying Cloudflare Tunnel. Doing so, without a Cloudflare account, is a quick way to experiment and try it out. However, be aware that these account-less Tunnels have no uptime guarantee. If you intend to use Tunnels in production you should use a pre-created named tunnel by following: https://developers.cloudflare.com/cloudflare-one/connections/connect-apps',
  '2026-11-26T03:10:00Z INF Requesting new quick Tunnel on trycloudflare.com...',
];
const CF_BOX = [
  '2026-11-26T03:10:03Z INF +--------------------------------------------------------------------------------------------+',
  '2026-11-26T03:10:03Z INF |  Your quick Tunnel has been created! Visit it at (it may take some time to be reachable):  |',
  '2026-11-26T03:10:03Z INF |  https://seven-lemon-harbor-quiet.trycloudflare.com                                        |',
  '2026-11-26T03:10:03Z INF +--------------------------------------------------------------------------------------------+',
];
const CF_AFTER = [
  '2026-11-26T03:10:03Z INF Version 2026.11.0 (Checksum 5861a10a43c9d14fa17bff3a39ac2670b4159c9bb103ff020ffcc4ad6b542948)',
  '2026-11-26T03:10:03Z INF GOOS: linux, GOVersion: go1.24.4, GoArch: amd64',
  '2026-11-26T03:10:03Z INF Settings: map[ha-connections:1 protocol:quic url:http://127.0.0.1:8787]',
  '2026-11-26T03:10:03Z INF Generated Connector ID: 1f0c3a52-5a43-4b8e-9a43-2e4d8b0f5a11',
  '2026-11-26T03:10:03Z INF Starting metrics server on 127.0.0.1:20241/metrics',
  '2026-11-26T03:10:04Z INF Registered tunnel connection connIndex=0 connection=0b6f2c1e-8d4c-4f0e-9d35-6b7a0e3c2f10 event=0 ip=198.41.200.13 location=ams08 protocol=quic',
];

describe('cloudflared', () => {
  it('runs a quick tunnel to the listener', () => {
    expect(cf.name).toBe('cloudflared');
    expect(cf.urlFrom).toBe('output');
    expect(cf.args).toEqual(['tunnel', '--url', 'http://127.0.0.1:8787']);
    expect(cloudflared('::1', 9000).args).toEqual(['tunnel', '--url', 'http://[::1]:9000']);
    expect(cloudflared('localhost', 1).args).toEqual(['tunnel', '--url', 'http://localhost:1']);
  });

  it('takes the framed URL after "Your quick Tunnel has been created!", not the docs link of the preamble', () => {
    const lines = [...CF_PREAMBLE, ...CF_BOX, ...CF_AFTER];
    expect(read(cf, lines)).toEqual([{ line: 4, url: 'https://seven-lemon-harbor-quiet.trycloudflare.com/' }]);
  });

  it('a preamble alone gives no URL; a framed URL without the sentence before it is not taken', () => {
    expect(read(cf, CF_PREAMBLE)).toEqual([]);
    expect(read(cf, ['2026-11-26T03:10:03Z INF |  https://docs.example.com/elsewhere  |'])).toEqual([]);
    // The sentence, then a framed line that is not a URL: nothing, and the next framed URL still counts.
    expect(read(cf, [CF_BOX[1]!, '2026-11-26T03:10:03Z INF |  not-a-url  |', CF_BOX[2]!])).toEqual([{ line: 2, url: 'https://seven-lemon-harbor-quiet.trycloudflare.com/' }]);
    // A framed URL of another scheme is not a public URL.
    expect(read(cf, [CF_BOX[1]!, '2026-11-26T03:10:03Z INF |  ftp://files.example.com  |'])).toEqual([]);
  });

  it('takes the URL once per sentence: the box printed again (a reconnection) gives it again', () => {
    const again = [...CF_BOX, ...CF_BOX.map((l) => l.replace('seven-lemon-harbor-quiet', 'other-name-four-words'))];
    expect(read(cf, again)).toEqual([
      { line: 2, url: 'https://seven-lemon-harbor-quiet.trycloudflare.com/' },
      { line: 6, url: 'https://other-name-four-words.trycloudflare.com/' },
    ]);
  });

  it('ERR and FTL lines are the reason it failed, without timestamp and level', () => {
    const lost = [
      ...CF_PREAMBLE,
      ...CF_BOX,
      '2026-11-26T03:12:00Z ERR Serve tunnel error error="timeout: no recent network activity" connIndex=0 event=0 ip=198.41.200.13',
      '2026-11-26T03:12:00Z WRN Serve tunnel error error="timeout: no recent network activity" connIndex=0',
      '2026-11-26T03:12:00Z ERR Connection terminated error="timeout: no recent network activity" connIndex=0',
    ];
    expect(read(cf, lost).filter((t) => t.error)).toEqual([
      { line: 6, error: 'Serve tunnel error error="timeout: no recent network activity" connIndex=0 event=0 ip=198.41.200.13' },
      { line: 8, error: 'Connection terminated error="timeout: no recent network activity" connIndex=0' },
    ]);
    expect(outcome(cf, ['2026-11-26T03:10:00Z FTL failed to start: bind: address already in use'])).toEqual({ url: undefined, error: 'failed to start: bind: address already in use' });
  });

  it('the error the command returns, printed bare, is the reason when no ERR line said more', () => {
    // The quick tunnel service cannot be reached: only the bare line says so.
    const unreachable = [...CF_PREAMBLE, 'failed to request quick Tunnel: Post "https://api.trycloudflare.com/tunnel": dial tcp: lookup api.trycloudflare.com on 127.0.0.53:53: no such host'];
    expect(outcome(cf, unreachable)).toEqual({
      url: undefined,
      error: 'failed to request quick Tunnel: Post "https://api.trycloudflare.com/tunnel": dial tcp: lookup api.trycloudflare.com on 127.0.0.53:53: no such host',
    });
    // Rate limited: the ERR line (with the status) says more than the bare line after it.
    const limited = [
      ...CF_PREAMBLE,
      '2026-11-26T03:10:01Z ERR Error unmarshaling QuickTunnel response: error code: 1015 error="invalid character \'e\' looking for beginning of value" status_code="429 Too Many Requests"',
      "failed to unmarshal quick Tunnel: invalid character 'e' looking for beginning of value",
    ];
    expect(outcome(cf, limited).error).toBe('Error unmarshaling QuickTunnel response: error code: 1015 error="invalid character \'e\' looking for beginning of value" status_code="429 Too Many Requests"');
    // A usage message: its first line, not the pointer to --help.
    expect(outcome(cf, ['Incorrect Usage: flag provided but not defined: -x', '', "See 'cloudflared tunnel --help'."]).error).toBe('Incorrect Usage: flag provided but not defined: -x');
  });

  it('shutdown lines are neither a URL nor an error', () => {
    const stop = ['2026-11-26T03:20:00Z INF Initiating graceful shutdown due to signal terminated ...', '2026-11-26T03:20:00Z INF Unregistered tunnel connection connIndex=0 event=0 ip=198.41.200.13', '2026-11-26T03:20:00Z INF Tunnel server stopped'];
    expect(read(cf, stop)).toEqual([]);
  });
});

const ng = ngrok('127.0.0.1', 8787);
/** One line as ngrok's JSON logger writes it: keys sorted. */
const ngLine = (fields: Record<string, unknown>) =>
  JSON.stringify(Object.fromEntries(Object.entries({ ...fields, t: '2026-11-26T03:10:00.123456789Z' }).sort(([a], [b]) => (a < b ? -1 : 1))));
const NG_AUTH =
  'authentication failed: Usage of ngrok requires a verified account and authtoken.\n\nSign up for an account: https://dashboard.ngrok.com/signup\nInstall your authtoken: https://dashboard.ngrok.com/get-started/your-authtoken\r\n\r\nERR_NGROK_4018\r\n';
const NG_PREAMBLE = [
  ngLine({ lvl: 'info', msg: 'no configuration paths supplied' }),
  ngLine({ lvl: 'info', msg: 'using configuration at default config path', path: '/home/dev/.config/ngrok/ngrok.yml' }),
  ngLine({ err: '<nil>', lvl: 'info', msg: 'open config file', path: '/home/dev/.config/ngrok/ngrok.yml' }),
  ngLine({ addr: '127.0.0.1:4040', allow_hosts: [], lvl: 'info', msg: 'starting web service', obj: 'web' }),
];

describe('ngrok', () => {
  it('runs an http tunnel to the listener with JSON logs on stdout', () => {
    expect(ng.name).toBe('ngrok');
    expect(ng.urlFrom).toBe('output');
    expect(ng.args).toEqual(['http', '127.0.0.1:8787', '--log', 'stdout', '--log-format', 'json']);
    expect(ngrok('::1', 9000).args).toEqual(['http', '[::1]:9000', '--log', 'stdout', '--log-format', 'json']);
  });

  it('takes the url of "started tunnel", nothing from the web service or the config lines', () => {
    const lines = [
      ...NG_PREAMBLE,
      ngLine({ lvl: 'info', msg: 'tunnel session started', obj: 'tunnels.session' }),
      ngLine({ id: '6a1f0c2b9e7d', lvl: 'info', msg: 'client session established', obj: 'csess' }),
      ngLine({ addr: 'http://127.0.0.1:8787', lvl: 'info', msg: 'started tunnel', name: 'command_line', obj: 'tunnels', url: 'https://3f9a-203-0-113-7.ngrok-free.app' }),
    ];
    expect(read(ng, lines, 'stdout')).toEqual([{ line: 6, url: 'https://3f9a-203-0-113-7.ngrok-free.app/' }]);
    // A tcp tunnel's address is not a URL to deliver to.
    expect(read(ng, [ngLine({ lvl: 'info', msg: 'started tunnel', obj: 'tunnels', url: 'tcp://0.tcp.ngrok.io:18420' })], 'stdout')).toEqual([]);
  });

  it('no authtoken: the eror/crit lines give the first line of err with its ERR_NGROK code', () => {
    const lines = [
      ...NG_PREAMBLE,
      ngLine({ err: NG_AUTH, lvl: 'eror', msg: 'failed to reconnect session', obj: 'tunnels.session' }),
      ngLine({ err: NG_AUTH, lvl: 'eror', msg: 'session closing', obj: 'tunnels.session' }),
      ngLine({ err: NG_AUTH, lvl: 'eror', msg: 'terminating with error', obj: 'app' }),
      ngLine({ err: NG_AUTH, lvl: 'crit', msg: 'command failed' }),
    ];
    const told = read(ng, lines, 'stdout');
    expect(told.map((t) => t.line)).toEqual([4, 5, 6, 7]);
    expect(new Set(told.map((t) => t.error))).toEqual(new Set(['authentication failed: Usage of ngrok requires a verified account and authtoken. (ERR_NGROK_4018)']));
  });

  it('an error whose first line names its code is not given the code twice; no err: the msg', () => {
    expect(outcome(ng, [ngLine({ err: 'failed to start tunnel: ERR_NGROK_108 limited to 1 simultaneous session', lvl: 'eror', msg: 'x' })], 'stdout').error).toBe('failed to start tunnel: ERR_NGROK_108 limited to 1 simultaneous session');
    expect(outcome(ng, [ngLine({ lvl: 'crit', msg: 'command failed' })], 'stdout').error).toBe('command failed');
    // A lost connection: the session's reason, then the command's.
    const lost = [ngLine({ err: 'read tcp 127.0.0.1:52814->3.125.102.39:443: read: connection reset by peer', lvl: 'eror', msg: 'session closing', obj: 'tunnels.session' }), ngLine({ err: 'session closed', lvl: 'crit', msg: 'command failed' })];
    expect(read(ng, lost, 'stdout')).toEqual([
      { line: 0, error: 'read tcp 127.0.0.1:52814->3.125.102.39:443: read: connection reset by peer' },
      { line: 1, error: 'session closed' },
    ]);
  });

  it('info and warn lines, shutdown lines and JSON that is not an object tell nothing', () => {
    const lines = [
      ngLine({ lvl: 'warn', msg: 'update available', obj: 'updater' }),
      ngLine({ lvl: 'info', msg: 'received stop request', obj: 'app', stopReq: { Restart: false } }),
      ngLine({ err: '<nil>', lvl: 'info', msg: 'session closing', obj: 'tunnels.session' }),
      '42',
      'null',
      '"started tunnel"',
      '[{"msg":"started tunnel","url":"https://x.ngrok-free.app"}]',
      '',
    ];
    expect(read(ng, lines, 'stdout')).toEqual([]);
  });

  it('the plain ERROR: block on stderr: its first line, then with the ERR_NGROK code once it comes', () => {
    const block = [
      'ERROR:  authentication failed: Usage of ngrok requires a verified account and authtoken.',
      'ERROR:  ',
      'ERROR:  Sign up for an account: https://dashboard.ngrok.com/signup',
      'ERROR:  Install your authtoken: https://dashboard.ngrok.com/get-started/your-authtoken',
      'ERROR:  ',
      'ERROR:  ERR_NGROK_4018',
      'ERROR:  https://ngrok.com/docs/errors/err_ngrok_4018',
      'ERROR:  ',
    ];
    expect(read(ng, block)).toEqual([
      { line: 0, error: 'authentication failed: Usage of ngrok requires a verified account and authtoken.' },
      { line: 5, error: 'authentication failed: Usage of ngrok requires a verified account and authtoken. (ERR_NGROK_4018)' },
    ]);
    // A usage refusal: the first line stays the reason.
    expect(outcome(ng, ['ERROR:  unknown flag: --bogus', 'ERROR:  ', "ERROR:  Run 'ngrok http --help' for usage."])).toEqual({ url: undefined, error: 'unknown flag: --bogus' });
  });
});

describe('ssh', () => {
  it('a reverse tunnel with keep-alives and no prompts, the destination last', () => {
    const t = ssh('deploy@hooks.example.com', 9000, '127.0.0.1', 8787);
    expect(t.name).toBe('ssh');
    expect(t.urlFrom).toBe('public-url');
    expect(t.args).toEqual(['-N', '-T', '-R', '9000:127.0.0.1:8787', '-o', 'ExitOnForwardFailure=yes', '-o', 'ServerAliveInterval=15', '-o', 'ServerAliveCountMax=3', '-o', 'BatchMode=yes', 'deploy@hooks.example.com']);
    expect(ssh('::1', 8787, '::1', 8787).args.slice(2, 4)).toEqual(['-R', '8787:[::1]:8787']);
    expect(ssh('::1', 8787, '::1', 8787).args.at(-1)).toBe('::1');
  });

  it('whatever ssh prints on stderr is the reason; stdout and blank lines are not', () => {
    const t = ssh('h', 1, '127.0.0.1', 2);
    expect(read(t, ['Warning: remote port forwarding failed for listen port 9000', '   ', 'Permission denied (publickey).'])).toEqual([
      { line: 0, error: 'Warning: remote port forwarding failed for listen port 9000' },
      { line: 2, error: 'Permission denied (publickey).' },
    ]);
    expect(read(t, ['Last login: Thu Nov 26 03:10:00 2026'], 'stdout')).toEqual([]);
  });
});

describe('parseSshTarget', () => {
  it.each([
    ['ssh:hooks.example.com', { destination: 'hooks.example.com', remotePort: undefined }],
    ['ssh:deploy@hooks.example.com', { destination: 'deploy@hooks.example.com', remotePort: undefined }],
    ['ssh:deploy@hooks.example.com:8787', { destination: 'deploy@hooks.example.com', remotePort: 8787 }],
    ['ssh:hooks.example.com:1', { destination: 'hooks.example.com', remotePort: 1 }],
    ['ssh:hooks.example.com:65535', { destination: 'hooks.example.com', remotePort: 65535 }],
    ['ssh:[::1]:9000', { destination: '::1', remotePort: 9000 }],
    ['ssh:me@[2001:db8::7]', { destination: 'me@2001:db8::7', remotePort: undefined }],
    ['ssh:203.0.113.7:22', { destination: '203.0.113.7', remotePort: 22 }],
    ['ssh:my-alias', { destination: 'my-alias', remotePort: undefined }],
  ])('accepts %s', (value, expected) => {
    expect(parseSshTarget(value)).toEqual(expected);
  });

  it.each([
    'ssh',
    'ssh:',
    'hooks.example.com',
    'ssh:-oProxyCommand=touch_pwned',
    'ssh:-host',
    'ssh:-user@host',
    'ssh:user@-host',
    'ssh:host:0',
    'ssh:host:65536',
    'ssh:host:123456',
    'ssh:host:port',
    'ssh:host:',
    'ssh:user@',
    'ssh:@host',
    'ssh:a@b@host',
    'ssh:::1',
    'ssh:[::1',
    'ssh:[host]:22',
    'ssh:host name',
    'ssh:host/path',
    'ssh:host:22:33',
    ' ssh:host',
  ])('refuses %j', (value) => {
    expect(parseSshTarget(value)).toBeUndefined();
  });
});
