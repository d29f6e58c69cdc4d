import type { Command } from 'commander';
import { type Context, type ContextRef, ownSecrets, type SecretsRef } from '../../context.js';
import type { SecretKeeper } from '../../redact.js';
import { nounSummary } from '../nouns.js';
import { CardboardError, UsageError } from '../../errors.js';
import { FaultSpecError, parseFaults } from '../../emulator/faults.js';
import { displayUrl, httpUrl, isLoopbackHost } from '../../http/url.js';
import { terminalText } from '../../io/text.js';
import { whenAborted } from '../../interrupt.js';
import { parseInteger, parsePort, parseRate } from '../../units.js';

/** Options of `cardboard emulator`, as plain data. */
export interface EmulatorRunOptions {
  port: number;
  host: string;
  boardsFile?: string;
  /** Derive the demo board's credentials and the card ids from this seed (not with boardsFile). */
  demoSeed?: string;
  pageSize: number;
  rateLimit?: { perMinute: number; burst: number };
  faults?: string;
  faultSeed?: number;
  seedCards: number;
  /** Print the tokens and signing keys of a --boards file (the demo board's are always printed). */
  printTokens: boolean;
  /** The first board's Webhook URL (the demo board's), replacing a boards file's. */
  webhookUrl?: string;
}

/** The service lets a key burst to 20 requests at once (120/min, 20 a second). */
const DEFAULT_BURST = 20;

const integer = (flag: string, value: string, min: number, max: number): number => parseInteger(value, flag, min, max);

/** Where the demo board's credentials come from, and whether they may be served on `host`. */
function checkCredentials(host: string, boardsFile: string | undefined, demoSeed: string | undefined): void {
  if (demoSeed === '') throw new UsageError('--demo-seed needs a non-empty value');
  if (demoSeed !== undefined && boardsFile !== undefined) throw new UsageError('--demo-seed and --boards cannot be combined: the seed makes the demo board, the file replaces it');
  // The fixed demo credentials are in the README: off loopback, anyone who can reach the port could use them.
  if (boardsFile !== undefined || demoSeed !== undefined || isLoopbackHost(host)) return;
  throw new UsageError(`--host ${host} is not loopback, and the demo board's token is public (it is in the README)`, {
    hint: 'Pass --boards FILE with your own tokens (never printed), or --demo-seed S for credentials derived from a hard-to-guess S.',
  });
}

/** Flags → options; throws UsageError on a bad value (exit 2, nothing started). */
export function toOptions(flags: Record<string, string | boolean | undefined>, insecure?: boolean): EmulatorRunOptions {
  const stringFlag = (name: string) => flags[name] as string | undefined;
  if (stringFlag('burst') !== undefined && stringFlag('rateLimit') === undefined) throw new UsageError('--burst needs --rate-limit');
  const faults = stringFlag('faults');
  if (faults !== undefined) {
    try {
      parseFaults(faults);
    } catch (err) {
      if (err instanceof FaultSpecError) throw new UsageError(`--faults: ${err.message}`);
      throw err;
    }
  }
  const rate = stringFlag('rateLimit');
  const host = stringFlag('host') ?? '127.0.0.1';
  const boardsFile = stringFlag('boards');
  const demoSeed = stringFlag('demoSeed');
  checkCredentials(host, boardsFile, demoSeed);
  const webhookUrl = stringFlag('webhookUrl');
  return {
    port: parsePort(stringFlag('port') ?? '4010'),
    host,
    boardsFile,
    demoSeed,
    pageSize: integer('--page-size', stringFlag('pageSize') ?? '50', 1, 100_000),
    rateLimit: rate === undefined ? undefined : {
      perMinute: parseRate(rate, '--rate-limit') * 60,
      burst: integer('--burst', stringFlag('burst') ?? String(DEFAULT_BURST), 1, 1_000_000),
    },
    faults,
    faultSeed: stringFlag('faultSeed') === undefined ? undefined : integer('--fault-seed', stringFlag('faultSeed')!, 0, 2 ** 32 - 1),
    seedCards: integer('--seed-cards', stringFlag('seedCards') ?? '0', 0, 1_000_000),
    printTokens: flags.printTokens === true,
    // Each delivery carries the board's signing key: plain http:// only to loopback unless --insecure.
    webhookUrl: webhookUrl === undefined ? undefined : httpUrl(webhookUrl, '--webhook-url', { insecure }),
  };
}

/** How long the emulator may take to close after Ctrl-C before the run ends regardless. */
const STOP_GRACE_MS = 1000;

/** Declare `cardboard emulator` on the program; the action runs `run` with the parsed options. */
export function emulatorCommand(parent: Command, ctx: ContextRef, run = runEmulator, secrets: SecretsRef = ownSecrets): Command {
  return parent
    .command('emulator')
    .description(nounSummary('emulator'))
    .option('--port <n>', 'port to listen on; 0 picks a free one', '4010')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--boards <file>', 'boards file (JSON: id → token, fields, updateMode, createFields, webhookUrl, signingKey)')
    .option('--demo-seed <seed>', 'derive the demo board\'s id, token and signing key (and the card ids) from a seed instead of the fixed, public ones')
    .option('--page-size <n>', 'cards per page of a list', '50')
    .option('--rate-limit <rate>', 'per-token limit, e.g. 120/min, 2/s or 7200/h; over it: 429 with Retry-After')
    .option('--burst <n>', `requests a token may send at once under --rate-limit (default: ${DEFAULT_BURST}, as the service)`)
    .option('--faults <spec>', 'inject faults, e.g. 503:0.05,500-after:0.02,reset:0.02,reset-after:0.01,delay:200ms')
    .option('--fault-seed <n>', 'seed of the fault dice, for a repeatable run')
    .option('--seed-cards <n>', 'insert N demo cards into the first board', '0')
    .option('--print-tokens', 'also print the tokens and signing keys of a --boards file')
    .option('--webhook-url <url>', "POST each card change of the demo board (a --boards file's first board) here, with its signing key")
    .addHelpText(
      'after',
      `
Webhooks are retried until answered 200, waiting 0.5 s, then twice as long after each failure up to 2 s:
a listener that was down gets the next try within seconds (the service keeps its own spacing).

Examples:
  $ cardboard emulator --webhook-url http://127.0.0.1:8787/   # the demo board, its changes sent to \`webhook listen\`; prints the export lines
  $ cardboard emulator --port 0 --boards fixtures/demo-boards.json --page-size 2
  $ cardboard emulator --rate-limit 120/min --faults 503:0.05,delay:200ms   # as the service: 120/min, bursts of 20`,
    )
    .action(async (flags: Record<string, string | boolean | undefined>) => run(ctx(), toOptions(flags, ctx().globals.insecure), secrets()));
}

/** Quote a value for a POSIX shell only when it needs it. */
function sh(value: string): string {
  return /^[\w./:@%+=-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}

/**
 * Start the emulator, print how to use it, serve until SIGINT/SIGTERM, then close cleanly (the process then ends
 * by the signal, main.ts). A boards file's tokens and keys, not printed, are added to `keeper`, the run's registry.
 */
export async function runEmulator(ctx: Context, opts: EmulatorRunOptions, keeper: SecretKeeper): Promise<void> {
  const emulator = await import('../../emulator/server.js');
  let boards: Awaited<ReturnType<typeof emulator.readBoardsFile>> | undefined;
  if (opts.boardsFile) {
    try {
      boards = await emulator.readBoardsFile(opts.boardsFile);
    } catch (err) {
      if (err instanceof emulator.BoardsFileError) throw new UsageError(`--boards: ${err.message}`);
      throw err;
    }
  }
  let running: Awaited<ReturnType<typeof emulator.startEmulator>>;
  try {
    running = await emulator.startEmulator({ ...opts, boards, idSeed: opts.demoSeed });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      throw new CardboardError(`cannot listen on ${opts.host}:${opts.port} (${code})`, { hint: 'Pick another --port, or --port 0 for a free one.', cause: err });
    }
    throw err;
  }
  // Catch Ctrl-C before the ready line: a supervisor may send SIGINT as soon as it reads it.
  const undrain = ctx.drain.enable({ graceMs: STOP_GRACE_MS });
  // A file's tokens are the user's to protect; the generated demo board's are printed on purpose.
  const showTokens = !opts.boardsFile || opts.printTokens;
  // Everything goes to stderr (stdout stays empty). Under --quiet only the data is left: the export
  // lines that say how to reach each board, and the ready line (with --port 0, the only place the port is).
  const data = (line: string) => ctx.stderr.write(`${line}\n`);
  const out = (line: string) => {
    if (!ctx.globals.quiet) data(line);
  };
  for (const [id, board] of Object.entries(running.boards)) {
    if (!showTokens) {
      keeper.add(board.token);
      keeper.add(board.signingKey);
    }
    out(`board ${id}: ${board.updateMode}, Create Fields ${board.createFields ? 'on' : 'off'}, fields ${board.fields.join(', ')}`);
    if (showTokens) out(`  token ${board.token}  signing key ${board.signingKey}`);
    if (board.webhookUrl !== null) out(terminalText(`  webhooks to ${displayUrl(board.webhookUrl)}, signed with ${showTokens ? 'the signing key above' : 'its signing key'}`));
    const env = [`CARDBOARD_BASE_URL=${sh(running.url)}`, `CARDBOARD_BOARD=${sh(id)}`];
    if (showTokens) env.push(`CARDBOARD_TOKEN=${sh(board.token)}`, `CARDBOARD_SIGNING_KEY=${sh(board.signingKey)}`);
    data(`  export ${env.join(' ')}`);
  }
  if (!showTokens) out(`(tokens are in ${opts.boardsFile}; --print-tokens shows them)`);
  if (opts.seedCards > 0) out(`seeded ${opts.seedCards} demo cards into board ${Object.keys(running.boards)[0]}`);
  if (opts.faults) out(`faults: ${opts.faults}`);
  data(`listening on ${running.url}  (Ctrl-C to stop)`);
  try {
    await whenAborted(ctx.drain.signal);
    // Open connections are closed at once; a close still pending when the grace ends is not waited for.
    await Promise.race([running.close(), whenAborted(ctx.signal)]);
  } finally {
    undrain();
  }
  out('emulator stopped');
}
