// `--quiet` leaves only the data; NO_COLOR and non-TTY output are honoured everywhere.
//
// What --quiet keeps on stderr (decided here, README "Output"):
// - warnings (`warning: ...`): data was dropped or a different card than asked for was written; a
//   script must still learn that, and stderr keeps stdout clean;
// - the ready line of the two servers (`webhook listen`: "Listening on URL", `emulator`: "listening on
//   URL"), and the emulator's `export` lines: with --port 0 they are the only place the address and
//   the credentials are, i.e. they are the data of a command whose stdout stays empty;
// - errors, of course (they are not a success).
// Everything else (ok:/info lines, summaries, "stopped") is silenced.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { cpSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBoardUse } from '../../src/commands/board/use.js';
import { runCardPut } from '../../src/commands/card/put.js';
import { runSchema } from '../../src/commands/schema/schema.js';
import { createProgress } from '../../src/io/progress.js';
import { toRecordLine } from '../../src/webhook/delivery.js';
import { BIN, type CliResult, childEnv, runMain, tempDir } from '../helpers/cli.js';
import { BOARD_ID, CREATE_NEW_BOARD_ID, CREATE_NEW_TOKEN, type RunningEmulator, SIGNING_KEY, startTestEmulator, TOKEN } from '../helpers/emulator.js';
import { startKeyReceiver } from '../helpers/receiver.js';
import { testContext } from '../io/buffers.js';

const ESC = '\u001b';
const BOARDS_FILE = fileURLToPath(new URL('../../fixtures/boards.json', import.meta.url));

let emu: RunningEmulator;
let receiver: Server;
let receiverUrl: string;
let cardId: string;
let config: string;
let records: string;

/** The board's signing key gets 200, anything else 403 (spec 6). */
async function startReceiver(): Promise<string> {
  const started = await startKeyReceiver(SIGNING_KEY);
  receiver = started.server;
  return `${started.url}/`;
}

/** A fresh copy of the config that stores "work" (default, with signing key) and "old". */
function configCopy(): string {
  const dir = tempDir('cardboard-quiet-config-');
  cpSync(config, dir, { recursive: true });
  return dir;
}

/** Run the CLI piped (in-process, streams not TTYs), with the board in the environment unless the config is meant. */
function run(args: string[], opts: { quiet: boolean; noColor: boolean; input?: string; env?: Record<string, string>; configDir?: string }): Promise<CliResult> {
  return runMain(opts.quiet ? ['--quiet', ...args] : args, {
    input: opts.input,
    configDir: opts.configDir ?? configCopy(),
    env: { NO_COLOR: opts.noColor ? '1' : undefined, ...opts.env },
  });
}

const onBoard = { CARDBOARD_BASE_URL: '', CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN, CARDBOARD_SIGNING_KEY: SIGNING_KEY };
const boardEnv = () => ({ ...onBoard, CARDBOARD_BASE_URL: emu.url });

beforeAll(async () => {
  emu = await startTestEmulator();
  receiverUrl = await startReceiver();
  const put = await runMain(['card', 'put', 'Name=Fix login', 'Status=Open'], { env: boardEnv() });
  cardId = put.stdout.trim();
  config = tempDir('cardboard-quiet-config-');
  for (const [alias, input, flags] of [
    ['work', `${TOKEN}\n${SIGNING_KEY}\n`, ['--signing-key-stdin']],
    ['old', `${TOKEN}\n`, []],
  ] as const) {
    const r = await runMain(['--base-url', emu.url, 'board', 'add', alias, '--id', BOARD_ID, '--token-stdin', ...flags], { configDir: config, input });
    expect(r.code).toBe(0);
  }
  records = join(tempDir('cardboard-quiet-records-'), 'hooks.jsonl');
  const lines = [1, 2].map((seq) =>
    toRecordLine({
      seq,
      receivedAt: '2024-05-01T10:00:00.000Z',
      method: 'POST',
      path: '/',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify({ _id: `c${seq}`, Name: `Card ${seq}` })),
    }),
  );
  writeFileSync(records, lines.join(''));
});

afterAll(async () => {
  await new Promise((resolve) => receiver?.close(resolve));
  await emu?.close();
});

interface Case {
  name: string;
  args: () => string[];
  input?: string;
  env?: () => Record<string, string>;
  /** Use the stored boards (config) rather than CARDBOARD_* variables. */
  config?: boolean;
  /** Exactly the stdout of a successful run. */
  data: (r: CliResult) => string | RegExp;
  /** The exit code of the run: 0 unless said (5: done, but not as asked). */
  code?: number;
  /** Exactly the stderr under --quiet (warnings stay); empty when omitted. */
  quietStderr?: () => string | RegExp;
  /** Something the run without --quiet writes to stderr, so the test shows --quiet removed it. */
  chatter?: RegExp;
}

const CASES: Case[] = [
  { name: 'board add', config: true, args: () => ['--base-url', emu.url, 'board', 'add', 'new', '--id', BOARD_ID, '--token-stdin'], input: `${TOKEN}\n`, data: () => '', chatter: /^ok: Saved board "new"/ },
  { name: 'board use', config: true, args: () => ['board', 'use', 'old'], data: () => '', chatter: /^ok: Board "old" is now the default/ },
  { name: 'board remove', config: true, args: () => ['board', 'remove', 'work'], data: () => '', chatter: /^ok: Removed board "work"\.\nNo default board now/ },
  { name: 'board set-signing-key', config: true, args: () => ['board', 'set-signing-key', 'old'], input: 'sk-new\n', data: () => '', chatter: /^ok: Stored the webhook signing key/ },
  {
    name: 'board list',
    config: true,
    args: () => ['board', 'list'],
    data: () => `alias\tid\tbaseUrl\tdefault\nold\t${BOARD_ID}\t${emu.url}\t\nwork\t${BOARD_ID}\t${emu.url}\tdefault\n`,
  },
  { name: 'board show, incomplete', config: true, args: () => ['board', 'show'], env: () => ({ CARDBOARD_BOARD: 'nowhere' }), data: () => /^board: {8}nowhere {2}\(from CARDBOARD_BOARD\)\n/, chatter: /^Incomplete:/ },
  { name: 'schema', args: () => ['schema'], data: () => /^name\tuuid\nName\t[-0-9a-f]{36}\nStatus\t[-0-9a-f]{36}\nOwner\t[-0-9a-f]{36}\nPriority\t[-0-9a-f]{36}\n$/ },
  { name: 'card put', args: () => ['card', 'put', 'Name=Quiet'], data: () => /^[^\s]+\n$/ },
  {
    name: 'card put with an unknown key (warning stays)',
    args: () => ['card', 'put', 'Name=Extra', 'Colour=red', '--allow-unknown'],
    data: () => /^[^\s]+\n$/,
    quietStderr: () => "warning: 'Colour' is not a field of the board; sent anyway: with Create Fields on it becomes a new field, otherwise the service drops it.\n",
    chatter: /^warning: 'Colour'/,
  },
  {
    name: 'card put --id on an Always Create New board (warning stays)',
    args: () => ['card', 'put', '--id', 'no-such-card', 'Name=Again'],
    env: () => ({ CARDBOARD_BOARD: CREATE_NEW_BOARD_ID, CARDBOARD_TOKEN: CREATE_NEW_TOKEN }),
    data: () => /^[^\s]+\n$/,
    code: 5,
    quietStderr: () => /^warning: the board created a new card \(\S+\) instead of updating no-such-card: no card has that id[^\n]*\nhint: [^\n]*Exit code 5[^\n]*\n$/,
  },
  { name: 'card get', args: () => ['card', 'get', cardId], data: () => `${JSON.stringify({ _id: cardId, Name: 'Fix login', Status: 'Open' })}\n` },
  { name: 'card list', args: () => ['card', 'list', '--limit', '1'], data: () => `${JSON.stringify({ _id: cardId, Name: 'Fix login', Status: 'Open' })}\n` },
  { name: 'comment', args: () => ['comment', cardId, 'Quiet', 'please'], data: () => /^[^\s]+\n$/ },
  { name: 'webhook send', args: () => ['webhook', 'send', '--to', receiverUrl], data: () => /^200 OK in [\d.]+ ms\nok\n$/ },
  {
    name: 'webhook replay',
    args: () => ['webhook', 'replay', records, '--to', receiverUrl],
    data: () => /^#1 {2}200 OK in [\d.]+ ms {2}ok\n#2 {2}200 OK in [\d.]+ ms {2}ok\n$/,
    chatter: /^replayed 2: 2 answered 200, 0 failed\n$/,
  },
];

describe('--quiet leaves only the data; piped output has no escape codes, NO_COLOR or not', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const opts = { input: c.input, env: c.config ? { ...c.env?.() } : { ...boardEnv(), ...c.env?.() } };
    const quiet = await run(c.args(), { ...opts, quiet: true, noColor: true });
    expect(quiet.code, quiet.stderr).toBe(c.code ?? 0);
    const data = c.data(quiet);
    if (typeof data === 'string') expect(quiet.stdout).toBe(data);
    else expect(quiet.stdout).toMatch(data);
    const quietStderr = c.quietStderr?.() ?? '';
    if (typeof quietStderr === 'string') expect(quiet.stderr).toBe(quietStderr);
    else expect(quiet.stderr).toMatch(quietStderr);

    for (const noColor of [true, false]) {
      const loud = await run(c.args(), { ...opts, quiet: false, noColor });
      expect(loud.code, loud.stderr).toBe(c.code ?? 0);
      if (typeof data === 'string') expect(loud.stdout).toBe(data);
      else expect(loud.stdout).toMatch(data);
      if (c.chatter) expect(loud.stderr).toMatch(c.chatter);
      expect(loud.stdout).not.toContain(ESC);
      expect(loud.stderr).not.toContain(ESC);
    }
    expect(quiet.stdout + quiet.stderr).not.toContain(ESC);
  });
});

/** Start a server command, wait for its ready line, optionally act, then Ctrl-C it. */
async function server(args: string[], env: Record<string, string | undefined>, ready: RegExp, act?: (url: string) => Promise<void>) {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [BIN, ...args], { env: childEnv({ env }) });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => {
    stdout += b.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (b: Buffer) => {
      stderr += b.toString();
      const m = ready.exec(stderr);
      if (m) resolve(m[1]!);
    });
    void exited.then((e) => reject(new Error(`exited ${e.signal ?? e.code}: ${stderr}`)));
  });
  await act?.(url);
  child.kill('SIGINT');
  return { ...(await exited), stdout, stderr, url };
}

describe('servers under --quiet keep only their ready line (and the emulator its export lines)', () => {
  for (const noColor of ['1', undefined]) {
    it(`emulator --quiet (NO_COLOR=${noColor ?? 'unset'}, piped)`, async () => {
      const r = await server(['--quiet', 'emulator', '--port', '0', '--boards', BOARDS_FILE], { NO_COLOR: noColor }, /^listening on (http:\/\/\S+)/m);
      expect(r.signal, r.stderr).toBe('SIGINT');
      expect(r.stdout).toBe('');
      const exports = ['b-test', 'b-create-new', 'b-create-fields'].map((id) => `  export CARDBOARD_BASE_URL=${r.url} CARDBOARD_BOARD=${id}\n`);
      expect(r.stderr).toBe(`${exports.join('')}listening on ${r.url}  (Ctrl-C to stop)\n`);
    });

    it(`webhook listen --quiet: deliveries on stdout, only the ready line on stderr (NO_COLOR=${noColor ?? 'unset'})`, async () => {
      const body = JSON.stringify({ _id: 'c1', Name: 'Quiet' });
      const r = await server(['--quiet', 'webhook', 'listen', '--port', '0'], { NO_COLOR: noColor, CARDBOARD_SIGNING_KEY: SIGNING_KEY }, /^Listening on (http:\/\/\S+)/m, async (url) => {
        const answer = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-signingKey': SIGNING_KEY }, body });
        expect(answer.status).toBe(200);
        const refused = await fetch(url, { method: 'POST', headers: { 'x-signingKey': 'wrong' }, body });
        expect(refused.status).toBe(403);
      });
      expect(r.signal, r.stderr).toBe('SIGINT');
      expect(r.stderr).toBe(`Listening on ${r.url} : paste this URL into Card Sources → Webhook URL (the service must be able to reach it).\n`);
      const lines = r.stdout.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ seq: 1, method: 'POST' });
      expect(r.stdout).not.toContain(ESC);
    });
  }
});

/** In-process on a fake TTY: colour appears only when NO_COLOR is unset (and TERM is not dumb). */
describe('on a terminal, colour only without NO_COLOR', () => {
  const ttyEnvs: Array<[string, Record<string, string | undefined>, boolean]> = [
    ['NO_COLOR unset', { NO_COLOR: undefined }, true],
    ['NO_COLOR=1', { NO_COLOR: '1' }, false],
    ['TERM=dumb', { NO_COLOR: undefined, TERM: 'dumb' }, false],
  ];

  it.each(ttyEnvs)('board use: ok: line (%s)', async (_name, env, colour) => {
    const { ctx, stdout, stderr } = testContext({ tty: true, errTty: true, env: { ...env, CARDBOARD_CONFIG_DIR: configCopy() } });
    await runBoardUse(ctx, { alias: 'old' });
    expect(stdout.text).toBe('');
    expect(stderr.text).toBe(colour ? `${ESC}[32mok:${ESC}[39m Board "old" is now the default.\n` : 'ok: Board "old" is now the default.\n');
  });

  it.each(ttyEnvs)('card put: warning line, kept under --quiet (%s)', async (_name, env, colour) => {
    const { ctx, stdout, stderr } = testContext({ tty: true, errTty: true, quiet: true, env: { ...env, ...boardEnv(), CARDBOARD_CONFIG_DIR: tempDir() } });
    await runCardPut(ctx, { fields: { Name: 'Tty', Colour: 'red' }, allowUnknown: true, json: false });
    expect(stdout.text).toMatch(/^\S+\n$/);
    expect(stderr.text.startsWith(colour ? `${ESC}[33mwarning:${ESC}[39m 'Colour'` : "warning: 'Colour'")).toBe(true);
    expect(stderr.text.split(ESC)).toHaveLength(colour ? 3 : 1);
  });

  it.each(ttyEnvs)('schema: table header (%s)', async (_name, env, colour) => {
    const { ctx, stdout, stderr } = testContext({ tty: true, env: { ...env, ...boardEnv(), CARDBOARD_CONFIG_DIR: tempDir() } });
    await runSchema(ctx, { json: false, refresh: false });
    expect(stdout.text).toMatch(/^Priority {2,}\S/m);
    expect(stdout.text.includes(`${ESC}[1mname${ESC}[22m`)).toBe(colour);
    if (!colour) expect(stdout.text).not.toContain(ESC);
    expect(stderr.text).toBe('');
  });

  it.each(ttyEnvs)('progress marks without animation (CI set) (%s)', async (_name, env, colour) => {
    const { ctx, stderr } = testContext({ errTty: true, env: { ...env, CI: '1' } });
    const progress = await createProgress(ctx);
    progress.start('working');
    progress.succeed('done');
    expect(stderr.text).toBe(colour ? `working\n${ESC}[32m✔${ESC}[39m done\n` : 'working\n✔ done\n');
  });

  it('--quiet on a terminal: the ok: line is gone, colour or not', async () => {
    const { ctx, stderr } = testContext({ tty: true, errTty: true, quiet: true, env: { NO_COLOR: undefined, CARDBOARD_CONFIG_DIR: configCopy() } });
    await runBoardUse(ctx, { alias: 'old' });
    expect(stderr.text).toBe('');
  });
});
