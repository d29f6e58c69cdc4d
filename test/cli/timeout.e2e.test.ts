// `cardboard --timeout 1h …` and `--timeout 2min …` work for every command.
// Every leaf command runs once (in-process through main(), `card get` and `import` as the built binary),
// as a real invocation against the in-process emulator (or one that
// fails after option parsing for a reason of its own), with `--timeout 1h` before the command word
// and `--timeout 2min` after its arguments: commander parses both (the last one wins), so one process
// per command proves both values in both places. None may mention --timeout or exit for it.
// Flag values of single commands (--give-up-after, --forward-timeout) are proven in
// test/commands/units-flags.test.ts, where it costs no process.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/program.js';
import { runMain, tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, SIGNING_KEY, startTestEmulator, TOKEN } from '../helpers/emulator.js';
import { testContext } from '../io/buffers.js';

let emu: RunningEmulator;
let cardId: string;
const dir = tempDir();
const csv = join(dir, 'cards.csv');

beforeAll(async () => {
  emu = await startTestEmulator();
  const res = await fetch(`${emu.url}/api/aptlet/${BOARD_ID}`, {
    method: 'POST',
    headers: { 'x-token': TOKEN, 'content-type': 'application/json' },
    body: JSON.stringify({ Name: 'timeout test' }),
  });
  cardId = ((await res.json()) as { _id: string })._id;
  writeFileSync(csv, 'Name,Status\nfirst,Open\nsecond,Done\n');
});
afterAll(async () => {
  await emu?.close();
});

/** One invocation per leaf command: its arguments, stdin, and the exit code it must end with. */
function invocations(): Record<string, { args: string[]; code: number; input?: string; env?: Record<string, string>; spawn?: boolean }> {
  const postUrl = `${emu.url}/api/aptlet/${BOARD_ID}`;
  return {
    'board add': { args: ['board', 'add', 'work', '--url', postUrl, '--token-stdin'], input: `${TOKEN}\n`, code: 0 },
    'board list': { args: ['board', 'list'], code: 0 },
    'board use': { args: ['board', 'use', 'nope'], code: 2 }, // no such alias: refused after parsing
    'board remove': { args: ['board', 'remove', 'nope'], code: 2 },
    'board show': { args: ['board', 'show'], code: 0 },
    'board set-signing-key': { args: ['board', 'set-signing-key', 'nope'], input: 'key\n', code: 2 },
    schema: { args: ['schema'], code: 0 },
    'card get': { args: ['card', 'get', cardId], code: 0, spawn: true },
    'card put': { args: ['card', 'put', 'Name=from the timeout test'], code: 0 },
    'card list': { args: ['card', 'list', '--all'], code: 0 },
    comment: { args: ['comment', cardId, 'a comment'], code: 0 },
    query: { args: ['query', 'SELECT 1'], env: { CARDBOARD_MIRROR: join(dir, 'missing.sqlite') }, code: 1 }, // no mirror there
    api: { args: ['api', 'GET', `/api/aptlet/{board}/card/${cardId}`], code: 0 },
    import: { args: ['import', csv, '--restart', '--journal', join(dir, 'journal')], code: 0, spawn: true },
    'webhook listen': { args: ['webhook', 'listen', '--port', '0'], code: 4 }, // no signing key: refuses to start
    'webhook replay': { args: ['webhook', 'replay', join(dir, 'missing.jsonl'), '--to', `${emu.url}/hook`], code: 2 },
    'webhook send': { args: ['webhook', 'send', '--to', `${emu.url}/hook`, '--card', cardId], env: { CARDBOARD_SIGNING_KEY: SIGNING_KEY }, code: 1 }, // answered 404
    // The mirror of this run's own file: a pull (requests), and the status of a mirror never made (exit 1, none sent).
    'mirror pull': { args: ['mirror', 'pull'], env: { CARDBOARD_MIRROR: join(dir, 'mirror.db') }, code: 0 },
    'mirror status': { args: ['mirror', 'status'], env: { CARDBOARD_MIRROR: join(dir, 'no-mirror.db') }, code: 1 },
    emulator: { args: ['emulator', '--boards', join(dir, 'missing.json')], code: 2 },
    completion: { args: ['completion', 'bash'], code: 0 },
  };
}

/** The leaf commands of the real tree (every noun loaded), as "noun verb". */
async function leafCommands(): Promise<string[]> {
  const { ctx } = testContext();
  const program = await buildProgram(ctx, [], () => ctx, true);
  const leaves: string[] = [];
  const visit = (cmd: Command, path: string[]) => {
    const subs = cmd.commands.filter((c) => c.name() !== 'help');
    if (subs.length === 0) leaves.push(path.join(' '));
    for (const sub of subs) visit(sub, [...path, sub.name()]);
  };
  for (const noun of program.commands.filter((c) => c.name() !== 'help')) visit(noun, [noun.name()]);
  return leaves.sort();
}

describe('the global --timeout, on every command', () => {
  it('covers every leaf command of the tree', async () => {
    expect(Object.keys(invocations()).sort()).toEqual(await leafCommands());
  });

  it('accepts 1h before the command and 2min after it, on every command', async () => {
    const env = { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN };
    const runs = Object.values(invocations()).map((inv) => ({ inv, args: ['--timeout', '1h', ...inv.args, '--timeout', '2min'] }));
    const results = await Promise.all(runs.map((r) => runMain(r.args, { env: { ...env, ...r.inv.env }, input: r.inv.input ?? '', spawn: r.inv.spawn })));
    const seen = runs.map((r, i) => ({ run: r.args.join(' '), code: results[i]!.code, stderr: results[i]!.stderr }));
    const expected = runs.map((r, i) => ({ run: r.args.join(' '), code: r.inv.code, stderr: results[i]!.stderr }));
    expect(seen).toEqual(expected);
    for (const s of seen) expect(s.stderr, s.run).not.toMatch(/--timeout|TimeoutOverflow/);
    // The invocations that send did reach the service: the puts, the imported rows and the comments.
    const board = emu.state()[BOARD_ID]!;
    expect(board.cards.filter((c) => c.Name === 'from the timeout test')).toHaveLength(1);
    expect(board.cards.filter((c) => c.Name === 'first')).toHaveLength(1);
    expect(board.comments[cardId]).toHaveLength(1);
  });

  it('still refuses a bare number, naming --timeout (so the check above can fail)', async () => {
    const r = await runMain(['card', 'get', 'x', '--timeout', '30']);
    expect(r.code).toBe(2);
    // A global option is read by the root, before the verb; the usage is still that of the command typed.
    expect(r.stderr).toBe("error: --timeout 30 has no unit\nhint: Write 30s for seconds, 30m for minutes or 30ms.\nUsage: cardboard card get [options] <cardId>\nSee 'cardboard card get --help'.\n");
  });
});
