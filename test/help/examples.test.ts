// Every command's --help has a one-line description and one to three examples that work
// as written. The tree is walked through the built binary's own --help; every example then runs in
// bash (pipefail) against the emulator, in a fresh cwd, config dir and HOME per example.
//
// What the examples may assume, and the only substitutions made (each a placeholder that cannot work
// as written):
// - the environment a user would have set: $TOKEN, $POST_URL, $SIGNING_KEY of the board, and $id, a
//   card on it (examples write "$id" where a card id goes);
// - the literal card id 64f1c2e8a1b2c3d4e5f60718 becomes that card's id (the service picks ids);
// - host URLs: https://cards.example.com becomes the emulator; http://localhost:3000 (your app) and
//   http://localhost:8787 (a listener in another terminal) become a receiver that answers 200 to the
//   board's signing key and 403 to any other;
// - the board is id 64f1c2e8 (as in the examples' POST URL), stored as alias "work" (default, with its
//   signing key) and "old-board"; its fields are the demo board's: Name, Status, Owner, Priority;
// - files the examples mention exist in the cwd: cards.csv (the demo CSV's first rows), cards.map.json,
//   notes.md, signing-key.txt, hooks.jsonl (recorded by `webhook listen`), fixtures/demo-boards.json,
//   a git repository with one commit; and the completion directories exist under HOME.
// Examples that prompt on a terminal run under script(1), a real pseudo-terminal, with the answer typed.
// Long-running examples (webhook listen, emulator) are started on --port 0 (any free port, so two runs of
// the suite never collide), must print their ready line, and must exit 0 on Ctrl-C (SIGINT).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, CHILD_KILL_MS, childEnv, runMain, tempDir } from '../helpers/cli.js';
import type { Card, Field } from '../../src/spec-types.js';
import { type RunningEmulator, startTestEmulator } from '../helpers/emulator.js';
import { recordDeliveries, startKeyReceiver } from '../helpers/receiver.js';
import { fillMirror } from '../helpers/mirror.js';

const BOARD = '64f1c2e8';
const TOKEN = 'tok-help-examples';
const SIGNING_KEY = 'sk-help-examples';
const FIELDS = ['Name', 'Status', 'Owner', 'Priority'];
const DEMO_CSV = fileURLToPath(new URL('../../fixtures/demo-cards.csv', import.meta.url));
const DEMO_BOARDS = fileURLToPath(new URL('../../fixtures/demo-boards.json', import.meta.url));
const TUNNEL_TOOLS = fileURLToPath(new URL('../fixtures/tunnel-tools/bin', import.meta.url));

/** One command's help, split into what the test checks. */
interface HelpPage {
  path: string[];
  text: string;
  /** The paragraph under the Usage line. */
  description: string[];
  examples: string[];
  examplesBlocks: number;
}

/** A command's --help, from the CLI run in-process (the same text the binary prints; see runMain). */
async function helpText(path: string[]): Promise<string> {
  const r = await runMain([...path, '--help']);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

/** Names listed under "Commands:" (first name of `list|ls`), without commander's own `help`. */
function subcommands(text: string): string[] {
  const lines = text.split('\n');
  const start = lines.indexOf('Commands:');
  if (start < 0) return [];
  const names: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith('  ')) break;
    const name = /^ {2}(\S+)/.exec(line)?.[1]?.split('|')[0];
    if (name && name !== 'help') names.push(name);
  }
  return names;
}

function parseHelp(path: string[], text: string): HelpPage {
  const lines = text.split('\n');
  const description: string[] = [];
  for (let i = 2; i < lines.length && lines[i] !== ''; i++) description.push(lines[i]!);
  const at = lines.indexOf('Examples:');
  const examples: string[] = [];
  if (at >= 0) for (const line of lines.slice(at + 1)) {
    if (!line.startsWith('  ')) break;
    examples.push(line);
  }
  return { path, text, description, examples, examplesBlocks: lines.filter((l) => /^Examples?:$/.test(l)).length };
}

/** Walk the tree from the root's command list: each noun, then each of its verbs. */
async function walk(): Promise<{ nouns: string[]; pages: HelpPage[] }> {
  const root = await helpText([]);
  const nouns = subcommands(root);
  const pages: HelpPage[] = [parseHelp([], root)];
  for (const noun of nouns) {
    const text = await helpText([noun]);
    pages.push(parseHelp([noun], text));
    for (const verb of subcommands(text)) pages.push(parseHelp([noun, verb], await helpText([noun, verb])));
  }
  return { nouns, pages };
}

const { nouns, pages } = await walk();
/**
 * Every example once: a command written the same on several pages (a noun's page shows a verb's example)
 * runs once, in the same fresh setting each page's copy would get, under the names of all its pages.
 */
const byCommand = new Map<string, string[]>();
for (const page of pages) {
  for (const line of page.examples) {
    const command = line.replace(/^ {2}\$ /, '');
    byCommand.set(command, [...(byCommand.get(command) ?? []), page.path.join(' ') || 'cardboard']);
  }
}
const examples = [...byCommand].map(([command, paths]) => ({ path: paths.join(', '), command }));

describe('--help of every command', () => {
  it('walks every command group of the program', () => {
    expect(nouns).toEqual(['board', 'schema', 'card', 'comment', 'import', 'webhook', 'mirror', 'query', 'api', 'emulator', 'completion']);
    expect(pages.map((p) => p.path.join(' '))).toEqual(
      expect.arrayContaining(['board add', 'board set-signing-key', 'card put', 'webhook listen', 'import', 'completion']),
    );
  });

  it.each(pages.map((p) => [p.path.join(' '), p] as const))('%s: one-line description, 1-3 examples in one Examples: block', (_name, page) => {
    expect(page.text.split('\n')[0]).toMatch(new RegExp(`^Usage: cardboard ${page.path.length ? `${page.path.join(' ')}(\\|\\S+)? ` : ''}`));
    expect(page.description).toHaveLength(1);
    expect(page.description[0]).not.toMatch(/^(Options|Arguments|Commands):$/);
    expect(page.examplesBlocks).toBe(1);
    expect(page.examples.length).toBeGreaterThanOrEqual(1);
    expect(page.examples.length).toBeLessThanOrEqual(3);
    for (const line of page.examples) expect(line).toMatch(/^ {2}\$ (?=\S).*\bcardboard\b/);
  });
});

let emulator: RunningEmulator;
let receiver: Server;
let receiverUrl: string;
let cardId: string;
let configTemplate: string;
let hooksFile: string;
let shimDir: string;
let mirrorFile: string;
const children = new Set<ChildProcess>();

/** The board's signing key gets 200, anything else 403 (spec 6). */
async function startReceiver(): Promise<string> {
  const started = await startKeyReceiver(SIGNING_KEY);
  receiver = started.server;
  return `${started.url}`;
}

beforeAll(async () => {
  emulator = await startTestEmulator({
    boards: { [BOARD]: { token: TOKEN, fields: [...FIELDS], updateMode: 'Update if exists', createFields: false, webhookUrl: null, signingKey: SIGNING_KEY } },
  });
  receiverUrl = await startReceiver();
  const put = await fetch(`${emulator.url}/api/aptlet/${BOARD}`, {
    method: 'POST',
    headers: { 'x-token': TOKEN, 'content-type': 'application/json' },
    body: JSON.stringify({ Name: 'Fix login', Status: 'Open' }),
  });
  cardId = ((await put.json()) as { _id: string })._id;

  configTemplate = tempDir('cardboard-help-config-');
  for (const [alias, stdin] of [
    ['work', `${TOKEN}\n${SIGNING_KEY}\n`],
    ['old-board', `${TOKEN}\n`],
  ] as const) {
    const keyFlag = stdin.split('\n').length > 2 ? ['--signing-key-stdin'] : [];
    const r = await runMain(['--base-url', emulator.url, 'board', 'add', alias, '--id', BOARD, '--token-stdin', ...keyFlag], { configDir: configTemplate, input: stdin });
    expect(r.stderr).toBe(`ok: Saved board "${alias}" (id ${BOARD} at ${emulator.url}; verified, 4 fields)${alias === 'work' ? ', the default board' : ''}.\n`);
  }
  hooksFile = await recordDeliveries(join(tempDir('cardboard-help-hooks-'), 'hooks.jsonl'), SIGNING_KEY, 45);

  // `cardboard` on PATH, as an installed package would put it.
  mirrorFile = await fillBoardMirror();

  shimDir = tempDir('cardboard-help-bin-');
  writeFileSync(join(shimDir, 'cardboard'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(join(shimDir, 'cardboard'), 0o755);
});

afterAll(async () => {
  for (const child of children) killGroup(child, 'SIGKILL');
  await new Promise((resolve) => receiver?.close(resolve));
  await emulator?.close();
});

/** A mirror of the board (`cardboard query` reads it): its schema and cards as the emulator has them, saved by the store. */
async function fillBoardMirror(): Promise<string> {
  const file = join(tempDir('cardboard-help-mirror-'), 'board.sqlite');
  const read = async (path: string) => (await (await fetch(`${emulator.url}/api/aptlet/${BOARD}${path}`, { headers: { 'x-token': TOKEN } })).json()) as unknown;
  await fillMirror({ CARDBOARD_MIRROR: file }, { baseUrl: emulator.url, id: BOARD }, (await read('?page=0')) as Card[], { fields: (await read('/schema')) as Field[] });
  return file;
}

/** A fresh cwd with every file the examples mention (a git repository only for the examples that run git), a fresh copy of the config, a fresh HOME. */
function prepare(needsGit: boolean): { cwd: string; env: NodeJS.ProcessEnv } {
  const cwd = tempDir('cardboard-help-cwd-');
  const csv = readFileSync(DEMO_CSV, 'utf8').split(/\r?\n/).slice(0, 4).join('\r\n');
  writeFileSync(join(cwd, 'cards.csv'), `${csv}\r\n`);
  writeFileSync(join(cwd, 'cards.map.json'), JSON.stringify({ Assignee: 'Owner' }));
  writeFileSync(join(cwd, 'notes.md'), 'Deployed to staging.\n\nAll checks green.\n');
  writeFileSync(join(cwd, 'signing-key.txt'), `${SIGNING_KEY}\n`);
  copyFileSync(hooksFile, join(cwd, 'hooks.jsonl'));
  // With its write-ahead log, if the store left one.
  for (const suffix of ['', '-wal']) if (existsSync(`${mirrorFile}${suffix}`)) copyFileSync(`${mirrorFile}${suffix}`, join(cwd, `board.sqlite${suffix}`));
  mkdirSync(join(cwd, 'fixtures'));
  copyFileSync(DEMO_BOARDS, join(cwd, 'fixtures', 'demo-boards.json'));
  if (needsGit) {
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=Ada', '-c', 'user.email=ada@example.com', ...args], { cwd, stdio: 'ignore' });
    git('init', '-q');
    git('commit', '-q', '--allow-empty', '-m', 'Fix the login redirect loop');
  }

  const home = tempDir('cardboard-help-home-');
  for (const dir of ['.local/share/bash-completion/completions', '.zfunc', '.config/fish/completions']) mkdirSync(join(home, dir), { recursive: true });
  const configDir = tempDir('cardboard-help-config-');
  cpSync(configTemplate, configDir, { recursive: true });
  const env = childEnv({
    configDir,
    env: {
      HOME: home,
      SHELL: '/bin/bash',
      // The stand-in tunnel tools (test/fixtures/tunnel-tools) play cloudflared and ngrok for `--tunnel` examples.
      PATH: `${shimDir}:${TUNNEL_TOOLS}:${process.env.PATH ?? ''}`,
      STANDIN_NODE: process.execPath,
      TOKEN,
      POST_URL: `${emulator.url}/api/aptlet/${BOARD}`,
      SIGNING_KEY,
      id: cardId,
      // Each example's own copy of the board's mirror.
      CARDBOARD_MIRROR: join(cwd, 'board.sqlite'),
    },
  });
  return { cwd, env };
}

/** The placeholders that cannot work as written (see the top of this file). */
function substitute(command: string): string {
  const out = command
    .replaceAll('https://cards.example.com', emulator.url)
    .replaceAll('http://localhost:3000', receiverUrl)
    .replaceAll('http://localhost:8787', receiverUrl)
    .replaceAll('64f1c2e8a1b2c3d4e5f60718', cardId);
  // A server example binds any free port: its default or named one (4010, 8787, 9000) may be held by another
  // run of this suite on the same machine.
  if (!SERVER.test(out)) return out;
  return /--port \d+/.test(out) ? out.replace(/--port \d+/, '--port 0') : out.replace(SERVER, (m) => `${m} --port 0`);
}

interface Outcome {
  code: number | null;
  /** The signal the command ended by (code null then). */
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Signal the process group a detached child leads, only while the child is not yet reaped: until then its
 * pid cannot be handed to another process, so the signal cannot reach someone else's (pids wrap at 32768
 * on a busy machine, and the suite spawns thousands).
 */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) process.kill(-child.pid, signal);
}

function collect(child: ChildProcess, timeoutMs = CHILD_KILL_MS): Promise<Outcome> {
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (b: Buffer) => {
    stdout += b.toString();
  });
  child.stderr?.on('data', (b: Buffer) => {
    stderr += b.toString();
  });
  return new Promise((resolve) => {
    const timer = setTimeout(() => killGroup(child, 'SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Run a one-shot example in bash; stdin is empty, as in a script. */
function runExample(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Outcome> {
  const child = spawn('bash', ['-o', 'pipefail', '-c', command], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  return collect(child);
}

/** Answers typed at the prompt of examples that ask on a terminal. */
const TYPED: Array<[RegExp, string]> = [
  [/^cardboard board add (?!.*--token-stdin)/, TOKEN],
  [/^cardboard board set-signing-key \S+$/, SIGNING_KEY],
];

/** Run an example on a pseudo-terminal (script(1)); type the answer once the hidden prompt shows. CI must be unset to prompt. */
function runOnTerminal(command: string, answer: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Outcome> {
  const { CI: _ci, ...ttyEnv } = env;
  const child = spawn('script', ['-qec', command, '/dev/null'], { cwd, env: ttyEnv, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  let typed = false;
  child.stdout?.on('data', (b: Buffer) => {
    if (!typed && b.toString().includes('input hidden')) {
      typed = true;
      child.stdin?.write(`${answer}\r`);
    }
  });
  const done = collect(child);
  void done.then(() => child.stdin?.end());
  return done;
}

/** Start a long-running example, wait for its ready line, stop it with Ctrl-C; it must end by that SIGINT. */
async function runUntilReady(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Outcome & { ready: boolean }> {
  const child = spawn('bash', ['-o', 'pipefail', '-c', command], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let ready = false;
  child.stderr?.on('data', (b: Buffer) => {
    // A server's ready line, or the end of the first pull of `mirror pull --every`.
    if (!ready && /^ ?listening on http:\/\/\S+|^Pulled .* Next pull at /im.test(b.toString())) {
      ready = true;
      killGroup(child, 'SIGINT');
    }
  });
  const outcome = await collect(child);
  return { ...outcome, ready };
}

/** Examples that run until Ctrl-C: the servers (on --port 0), and the pull that repeats. */
const SERVER = /\bcardboard (webhook listen|emulator)\b/;
const LONG_RUNNING = /\bcardboard (webhook listen|emulator|mirror pull --every)\b/;


describe('every example works as written against the emulator', () => {
  it('has examples to run', () => {
    expect(examples.length).toBeGreaterThanOrEqual(pages.length);
  });

  const check = async (_path: string, written: string) => {
    const command = substitute(written);
    const { cwd, env } = prepare(/\bgit\b/.test(command));
    const typed = TYPED.find(([re]) => re.test(command))?.[1];
    let outcome: Outcome;
    if (LONG_RUNNING.test(command)) {
      const run = await runUntilReady(command, cwd, env);
      expect(run.ready, run.stderr).toBe(true);
      // Stopped cleanly by the Ctrl-C sent, it ends by it (bash too, when it runs a pipeline).
      expect({ code: run.code, signal: run.signal }, `${run.stdout}\n${run.stderr}`).toEqual({ code: null, signal: 'SIGINT' });
      outcome = run;
    } else {
      outcome = typed !== undefined ? await runOnTerminal(command, typed, cwd, env) : await runExample(command, cwd, env);
      expect(outcome.code, `${outcome.stdout}\n${outcome.stderr}`).toBe(0);
    }
    expect(outcome.stderr).not.toMatch(/^error:/m);
    expect(outcome.stdout).not.toMatch(/^error:/m);
  };
  // Each example has its own cwd, config and HOME, so the one-shot ones run side by side; the servers run
  // one at a time.
  const oneShot = examples.filter((e) => !LONG_RUNNING.test(e.command));
  const servers = examples.filter((e) => LONG_RUNNING.test(e.command));
  it.concurrent.each(oneShot.map((e) => [e.path, e.command] as const))('%s: %s', check);
  it.each(servers.map((e) => [e.path, e.command] as const))('%s: %s', check);
});
