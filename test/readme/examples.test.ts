// The examples of the README and of every guide in docs/ run as written against `cardboard emulator`
// started with its defaults.
//
// Which lines run (the convention; a new example joins in by being written in one of these blocks):
// - every ```sh block: each line that is not blank or a `#` comment is a command (a line ending in `\`
//   continues on the next); a trailing `# exit N` says the documented exit code (default 0);
// - every ```console block: each `$ ` line is a command; `$ echo $?` followed by a number gives the
//   exit code of the command before it; the other lines are output and are not compared;
// - ```text and other blocks are never run; `<!-- examples: skip REASON -->` just before a block skips
//   it whole; a line that cannot run as written is listed in SKIP below with the reason.
//
// Each page is one reader following it from top to bottom, in a session of its own with its own emulator
// (the sessions run side by side, the lines of each one after the other): one working directory (holding a copy of fixtures/ and a git
// repository with one commit), one config dir and HOME, `cardboard` on PATH (the built bin/cardboard.js).
// Variables carry from line to line (`id=$(cardboard card put …)` then `"$id"`; `export`). The README's
// session starts from nothing; every other page's starts where the README's first steps leave a reader:
// its `board add local` line has run (the demo board stored, and the default). What the reader is assumed
// to have, and the only rewrites made:
// - $TOKEN, $SIGNING_KEY and $POST_URL: those of the emulator's demo board (as it prints them);
// - port 4010 (the emulator's default) is rewritten to the port of the session's emulator, started with
//   `cardboard emulator --port 0` so parallel runs never collide; port 3000 ("your app") to a receiver
//   that answers 200 to the demo board's signing key and 403 to any other;
// - hooks.jsonl, "the recorded deliveries", is a file recorded by `webhook listen --record` (45 deliveries);
// - the completion directories exist under HOME.
// A page with no line that runs is listed in CHECKED_BY with the test that checks it instead.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_BOARD_ID, DEMO_SIGNING_KEY, DEMO_TOKEN } from '../../src/emulator/boards.js';
import { BIN, CHILD_KILL_MS, childEnv, runMain, tempDir } from '../helpers/cli.js';
import { docPages, readPage } from '../helpers/docs-pages.js';
import { recordDeliveries, startKeyReceiver } from '../helpers/receiver.js';

const FIXTURES = fileURLToPath(new URL('../../fixtures', import.meta.url));

/** Lines that cannot run as written, and why. */
const SKIP: Array<[RegExp, string]> = [
  [/^(npm|node) /, 'a development command (install, test suite, benchmarks), not a cardboard example'],
  [/cards\.example\.com/, 'names a placeholder service (cards.example.com) the reader replaces with theirs'],
  [/=(sk-)?\.\.\.(\s|$)/, 'a placeholder value (`...`) the reader fills in'],
  [/--board src\b/, 'needs two stored boards, src and other'],
  [/\bbig\.csv\b/, "the reader's own large file, stopped with Ctrl-C (resume is tested in test/import)"],
];
/** Pages with no line that runs, and what checks them instead. */
const CHECKED_BY = new Map<string, string>([
  ['docs/README.md', 'test/docs/pages.test.ts (its links, and the pages it lists are the pages of docs/)'],
  ['docs/architecture.md', 'test/docs/pages.test.ts (every module it names exists)'],
  ['docs/benchmarks.md', 'test/docs/pages.test.ts (its table is test/bench/results.md; its flags are in the bench usage)'],
  ['docs/json.md', 'test/json/shapes.e2e.test.ts (each shape against real output)'],
  ['docs/security.md', 'test/docs/pages.test.ts (its links and the test paths it names)'],
]);
/** The README line that stores the demo board: every other page's session starts after it. */
const FIRST_STEP = /^printf .*\| cardboard board add local --base-url http:\/\/127\.0\.0\.1:4010 --id \S+ --token-stdin --signing-key-stdin$/;
/** Servers that run until Ctrl-C. */
const LONG_RUNNING = /\bcardboard (emulator|webhook listen)\b/;

interface Example {
  /** 1-based line of its page where the command starts. */
  line: number;
  command: string;
  exit: number;
  skip?: string;
}

/** Every command of a page's sh and console blocks, in order (see the convention above). */
function extractExamples(markdown: string): Example[] {
  const lines = markdown.split(/\r?\n/);
  const out: Example[] = [];
  let lang: string | undefined;
  let blockSkip: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!;
    const fence = /^```(\w*)/.exec(text);
    if (fence) {
      if (lang === undefined) {
        lang = fence[1]!;
        const before = lines.slice(0, i).reverse().find((l) => l.trim() !== '');
        blockSkip = /^<!-- examples: skip (.+?) -->$/.exec(before?.trim() ?? '')?.[1];
      } else lang = undefined;
      continue;
    }
    if (lang !== 'sh' && lang !== 'console') continue;
    let command: string;
    if (lang === 'sh') {
      if (text.trim() === '' || text.trimStart().startsWith('#')) continue;
      command = text;
    } else {
      if (!text.startsWith('$ ')) continue;
      command = text.slice(2);
      if (command.trim() === 'echo $?') {
        const code = /^\d+$/.exec(lines[i + 1]?.trim() ?? '');
        if (code && out.length > 0) out[out.length - 1]!.exit = Number(code[0]);
        continue;
      }
    }
    const line = i + 1;
    while (command.endsWith('\\') && i + 1 < lines.length) command = `${command.slice(0, -1)} ${lines[++i]!.trim()}`;
    const exit = Number(/#\s*exit (\d+)\s*$/.exec(command)?.[1] ?? 0);
    const skip = blockSkip ?? SKIP.find(([re]) => re.test(command.trim()))?.[1] ?? fixedPort(command);
    out.push({ line, command: command.trim(), exit, skip });
  }
  return out;
}

/** A server that binds a fixed port (its default 4010 or 8787) could collide with a parallel run. */
function fixedPort(command: string): string | undefined {
  if (!LONG_RUNNING.test(command) || /--port 0\b/.test(command)) return undefined;
  return 'a server on a fixed port (4010 or 8787) that a parallel test may hold; the same command with --port 0 runs';
}


interface Outcome {
  code: number | null;
  /** The signal the command ended by (code null then). */
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Collect a one-shot child's output (decoded once at the end) and its exit code; its process group is
 * SIGKILLed after CHILD_KILL_MS. The emulator is not collected this way: it lives until afterAll (see startEmulator).
 */
function collect(children: Set<ChildProcess>, child: ChildProcess, onStderr?: (text: string) => void): Promise<Outcome> {
  children.add(child);
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout?.on('data', (b: Buffer) => out.push(b));
  child.stderr?.on('data', (b: Buffer) => {
    err.push(b);
    onStderr?.(Buffer.concat(err).toString('utf8'));
  });
  return new Promise((resolve) => {
    const timer = setTimeout(() => killGroup(child, 'SIGKILL'), CHILD_KILL_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
  });
}

/**
 * Signal the process group a detached child leads, only while the child is not yet reaped: until then its
 * pid cannot be handed to another process, so the signal cannot reach someone else's (pids wrap at 32768
 * on a busy machine, and the suite spawns thousands).
 */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) process.kill(-child.pid, signal);
}

interface Emulator {
  child: ChildProcess;
  url: string;
  board: string;
  token: string;
  signingKey: string;
  /** Everything it wrote on stderr so far. */
  stderr(): string;
  /** Set once it exited: how, and when (ms after it was started). */
  exited?: { code: number | null; signal: NodeJS.Signals | null; afterMs: number };
  /** Resolves when it has exited and its pipes are closed. */
  closed: Promise<void>;
}

/**
 * `cardboard emulator --port 0` (its defaults otherwise); resolves with what its export line says. It serves
 * the whole file, so nothing stops it but afterAll: no time budget (a loaded machine stretches the file past
 * any fixed one), and its exit, should it come early, is kept to be reported by the next example.
 */
async function startEmulator(): Promise<Emulator> {
  const started = Date.now();
  const child = spawn(process.execPath, [BIN, 'emulator', '--port', '0'], { env: childEnv(), detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const exited = new Promise<Emulator['exited']>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, afterMs: Date.now() - started })));
  const ready = await new Promise<RegExpExecArray>((resolve, reject) => {
    child.stderr.on('data', () => {
      if (!/^listening on /m.test(stderr)) return;
      const m = /export CARDBOARD_BASE_URL=(\S+) CARDBOARD_BOARD=(\S+) CARDBOARD_TOKEN=(\S+) CARDBOARD_SIGNING_KEY=(\S+)/.exec(stderr);
      if (m) return resolve(m);
      killGroup(child, 'SIGKILL');
      reject(new Error(`no export line: ${stderr}`));
    });
    void exited.then((e) => reject(new Error(`emulator exited (${e!.signal ?? e!.code}) before it listened: ${stderr}`)));
  });
  const [, url, board, token, signingKey] = ready;
  const running: Emulator = { child, url: url!, board: board!, token: token!, signingKey: signingKey!, stderr: () => stderr, closed };
  void exited.then((e) => (running.exited = e));
  return running;
}

/** Fails when the emulator is gone: its exit says why, where ECONNREFUSED from every later example would not. */
function expectEmulatorRunning(emulator: Emulator): void {
  const e = emulator.exited;
  if (e) expect.fail(`the emulator exited (${e.signal ?? `code ${e.code}`}) ${e.afterMs} ms after it started; its stderr:\n${emulator.stderr()}`);
}

/** One reader's session: an emulator, "your app", a working directory and a shell environment. */
class Session {
  emulator!: Emulator;
  /** The one-shot children of this session still running. */
  private readonly children = new Set<ChildProcess>();
  private receiver?: Server;
  private receiverUrl = '';
  private cwd = '';
  /** The reader's shell environment, as the previous line left it. */
  private env: NodeJS.ProcessEnv = {};

  async start(page: string): Promise<void> {
    this.emulator = await startEmulator();
    const started = await startKeyReceiver(this.emulator.signingKey);
    this.receiver = started.server;
    this.receiverUrl = started.url;

    this.cwd = tempDir('cardboard-readme-cwd-');
    cpSync(FIXTURES, join(this.cwd, 'fixtures'), { recursive: true });
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=Ada', '-c', 'user.email=ada@example.com', ...args], { cwd: this.cwd, stdio: 'ignore' });
    git('init', '-q');
    git('commit', '-q', '--allow-empty', '-m', 'Fix the login redirect loop');
    // Only where a page uses them: recording takes a listener and 45 requests.
    if (readPage(page).includes('hooks.jsonl')) copyFileSync(await recorded(this.emulator.signingKey), join(this.cwd, 'hooks.jsonl'));

    const home = tempDir('cardboard-readme-home-');
    for (const dir of ['.local/share/bash-completion/completions', '.config/fish/completions']) mkdirSync(join(home, dir), { recursive: true });
    const bin = tempDir('cardboard-readme-bin-');
    writeFileSync(join(bin, 'cardboard'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    chmodSync(join(bin, 'cardboard'), 0o755);
    this.env = childEnv({
      configDir: tempDir('cardboard-readme-config-'),
      env: {
        HOME: home,
        XDG_CONFIG_HOME: undefined,
        XDG_CACHE_HOME: undefined,
        SHELL: '/bin/bash',
        PATH: `${bin}:${process.env.PATH ?? ''}`,
        TOKEN: this.emulator.token,
        SIGNING_KEY: this.emulator.signingKey,
        POST_URL: `${this.emulator.url}/api/aptlet/${this.emulator.board}`,
      },
    });
    if (page !== 'README.md') {
      const first = firstStep();
      const outcome = await this.runFirstStep(this.rewritePorts(first.command));
      expect(outcome.code, `README.md:${first.line} ${first.command}\n${outcome.stderr}`).toBe(0);
    }
  }

  /**
   * The README's `printf … | cardboard board add local …` for a page that starts after it: the printf in
   * bash, the cardboard command in this process (runMain) with the session's environment. The README's
   * own session runs the line as written, with the built binary.
   */
  async runFirstStep(command: string): Promise<Outcome> {
    const [printf, cardboard] = command.split(' | cardboard ');
    const input = execFileSync('bash', ['-c', printf!], { cwd: this.cwd, env: this.env });
    // FIRST_STEP holds no quoting after the pipe: its words are split by spaces.
    return runMain(cardboard!.split(' '), { input, env: { ...this.env, XDG_CACHE_HOME: undefined }, configDir: this.env.CARDBOARD_CONFIG_DIR });
  }

  async stop(): Promise<void> {
    for (const child of this.children) killGroup(child, 'SIGKILL');
    await new Promise((resolve) => (this.receiver ? this.receiver.close(resolve) : resolve(undefined)));
    const emulator = this.emulator;
    if (!emulator) return;
    // Still serving at the end (so it served every example), and Ctrl-C stops it cleanly.
    expectEmulatorRunning(emulator);
    killGroup(emulator.child, 'SIGINT');
    await emulator.closed;
    expect(emulator.exited, emulator.stderr()).toMatchObject({ code: null, signal: 'SIGINT' });
    expect(emulator.stderr()).toMatch(/^emulator stopped$/m);
  }

  /** Rewrite only the ports: the emulator's default 4010 and "your app" on 3000. */
  rewritePorts(command: string): string {
    const port = (url: string) => new URL(url).port;
    return command
      .replace(/\b(127\.0\.0\.1|localhost):4010\b/g, `127.0.0.1:${port(this.emulator.url)}`)
      .replace(/\b(127\.0\.0\.1|localhost):3000\b/g, `127.0.0.1:${port(this.receiverUrl)}`);
  }

  /** Run one line in bash (pipefail, every assignment exported) and keep the environment it leaves. */
  async runLine(command: string): Promise<Outcome> {
    const envFile = join(this.cwd, '.readme-env');
    const script = `set -a\n${command}\n__rc=$?\nenv -0 > ${JSON.stringify(envFile)}\nexit $__rc\n`;
    const child = spawn('bash', ['-o', 'pipefail', '-c', script], { cwd: this.cwd, env: this.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const outcome = await collect(this.children, child);
    const next: NodeJS.ProcessEnv = {};
    for (const entry of readFileSync(envFile, 'utf8').split('\0')) {
      const eq = entry.indexOf('=');
      if (eq > 0 && !['_', '__rc', 'SHLVL', 'OLDPWD', 'PWD'].includes(entry.slice(0, eq))) next[entry.slice(0, eq)] = entry.slice(eq + 1);
    }
    rmSync(envFile);
    this.env = next;
    return outcome;
  }

  /** Start a server example, wait for its ready line, press Ctrl-C: it must have been ready and end by that SIGINT. */
  async runUntilReady(command: string): Promise<Outcome & { ready: boolean }> {
    const child = spawn('bash', ['-o', 'pipefail', '-c', command], { cwd: this.cwd, env: this.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let ready = false;
    const outcome = await collect(this.children, child, (text) => {
      if (!ready && /^ ?listening on http:\/\/\S+/im.test(text)) {
        ready = true;
        killGroup(child, 'SIGINT');
      }
    });
    return { ...outcome, ready };
  }

  /** Run one example as the reader would, and check its exit code. */
  async run(page: string, example: Example): Promise<void> {
    expectEmulatorRunning(this.emulator);
    const command = this.rewritePorts(example.command);
    let outcome: Outcome;
    if (LONG_RUNNING.test(command)) {
      const run = await this.runUntilReady(command);
      expect(run.ready, run.stderr).toBe(true);
      // Stopped cleanly by the Ctrl-C sent, it ends by it: what its example's exit 0 stands for.
      expect({ code: run.code, signal: run.signal }, `${page}: ${command}\n${run.stderr}`).toEqual({ code: null, signal: 'SIGINT' });
      outcome = { ...run, code: 0 };
    } else {
      outcome = await this.runLine(command);
    }
    expect(outcome.code, `${page}: ${command}\n--- stdout\n${outcome.stdout}\n--- stderr\n${outcome.stderr}`).toBe(example.exit);
    if (example.exit === 0) expect(outcome.stderr).not.toMatch(/^error:/m);
  }
}

const deliveries = new Map<string, Promise<string>>();

/**
 * hooks.jsonl: 45 deliveries signed with `signingKey`, recorded by `webhook listen --record` once for the
 * file (every session's emulator serves the demo board, with the same key); each session gets its own copy.
 */
function recorded(signingKey: string): Promise<string> {
  if (!deliveries.has(signingKey)) deliveries.set(signingKey, recordDeliveries(join(tempDir('cardboard-readme-hooks-'), 'hooks.jsonl'), signingKey, 45));
  return deliveries.get(signingKey)!;
}

/** The demo board the emulator serves without --boards (test/emulator/demo-board.test.ts starts it and checks). */
const DEMO = { board: DEMO_BOARD_ID, token: DEMO_TOKEN, signingKey: DEMO_SIGNING_KEY };
/** Each page's examples, README first. */
const pages = new Map(docPages().map((page) => [page, extractExamples(readPage(page))]));
const runs = (examples: Example[]) => examples.some((e) => !e.skip);

/** The README's line that stores the demo board. */
function firstStep(): Example {
  const found = pages.get('README.md')!.find((e) => !e.skip && FIRST_STEP.test(e.command));
  if (!found) throw new Error(`README.md has no line matching ${FIRST_STEP} to start the other pages' sessions from`);
  return found;
}

describe('the examples of the README and docs/, run as written against `cardboard emulator`', () => {
  it('the emulator’s demo board is the one the README documents', () => {
    const readme = readPage('README.md');
    for (const value of [DEMO.board, DEMO.token, DEMO.signingKey]) expect(readme).toContain(`\`${value}\``);
    expect(firstStep().command).toContain(`--id ${DEMO.board}`);
  });

  it('reads the convention: sh lines, console `$ ` lines with `echo $?`, continuations, skip markers', () => {
    const md = [
      '```sh', '# a comment', 'cardboard schema   # trailing comment', 'cardboard card list \\', '  --all', 'cardboard board x   # exit 4', '```',
      '```console', '$ cardboard import a.csv', 'error: ...', '$ echo $?', '2', '$ cardboard import a.csv --map A=B', 'created 1', '```',
      '```text', '$ cardboard card put status=Open', '```',
      '<!-- examples: skip needs a terminal -->', '', '```sh', 'cardboard board add work', '```',
    ].join('\n');
    expect(extractExamples(md)).toEqual([
      { line: 3, command: 'cardboard schema   # trailing comment', exit: 0, skip: undefined },
      { line: 4, command: 'cardboard card list  --all', exit: 0, skip: undefined },
      { line: 6, command: 'cardboard board x   # exit 4', exit: 4, skip: undefined },
      { line: 9, command: 'cardboard import a.csv', exit: 2, skip: undefined },
      { line: 13, command: 'cardboard import a.csv --map A=B', exit: 0, skip: undefined },
      { line: 22, command: 'cardboard board add work', exit: 0, skip: 'needs a terminal' },
    ]);
  });

  it('every page either runs or names the test that checks it instead', () => {
    const silent = [...pages].filter(([, examples]) => !runs(examples)).map(([page]) => page);
    expect(silent).toEqual([...CHECKED_BY.keys()].sort());
    expect(runs(pages.get('README.md')!)).toBe(true);
  });

  it('runs an example of every core command: boards, schema, cards, comments, import, webhooks, emulator, completion (none of them skipped)', () => {
    const run = [...pages.values()].flat().filter((e) => !e.skip).map((e) => e.command);
    for (const wanted of [
      /cardboard board add local --base-url http:\/\/127\.0\.0\.1:4010 --id \S+ --token-stdin$/,
      /^cardboard board list\b/, /^cardboard board use \S+/, /^cardboard board show\b/,
      /^cardboard schema\b/, /^id=\$\(cardboard card put /, /^cardboard card get "\$id"/,
      /^cardboard card list\s*(#.*)?$/, /card list .*--format csv/, /card list .*--format json\b/, /card list .*--format ndjson/,
      /^cardboard comment "\$id"/, /^cardboard import fixtures\/demo-cards\.csv --map/, /^cardboard import .* --dry-run/,
      /^cardboard webhook send /, /^cardboard webhook replay /, /^cardboard emulator .*--port 0/, /^cardboard completion bash/,
    ]) {
      expect(run.some((c) => wanted.test(c)), String(wanted)).toBe(true);
    }
  });
});

for (const [page, examples] of pages) {
  if (!runs(examples)) continue;
  describe.concurrent(`${page}: its examples as one reader's session`, () => {
    const session = new Session();
    beforeAll(() => session.start(page));
    afterAll(() => session.stop());
    for (const example of examples) {
      const title = `${page}:${example.line}  ${example.command}${example.exit ? `  (exit ${example.exit})` : ''}`;
      if (example.skip) {
        it.skip(`${title}  [skipped: ${example.skip}]`, () => {});
        continue;
      }
      it.sequential(title, () => session.run(page, example));
    }
  });
}
