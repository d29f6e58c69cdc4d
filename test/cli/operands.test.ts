// `cardboard -- schema` printed nothing and exited 0: the word after `--` was dispatched by
// commander to a placeholder the start-up never loaded. findNoun now reads argv as commander does, and a
// placeholder that runs anyway refuses (exit 2) instead of succeeding silently.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { buildProgram, findNoun, scanArgv } from '../../src/program.js';
import { testContext } from '../io/buffers.js';
import { runMain, tempDir } from '../helpers/cli.js';
import { type HostileServer, startHostileServer } from '../helpers/hostile-server.js';

let server: HostileServer;
let env: Record<string, string>;
beforeAll(async () => {
  server = await startHostileServer({ mode: 'plain', fields: ['Title', 'Status'] });
  env = { CARDBOARD_BASE_URL: server.url, CARDBOARD_BOARD: server.boardId, CARDBOARD_TOKEN: server.token };
});
afterAll(() => server.close());

describe('the command word', () => {
  it('is found after `--` as commander finds it, and after a cluster of short flags ending in -b', () => {
    expect(findNoun(['--', 'schema'])).toBe('schema');
    expect(findNoun(['-q', '--', 'card', 'list'])).toBe('card');
    expect(findNoun(['--', 'help', 'card'])).toBe('card');
    expect(findNoun(['-qb', 'work', 'schema'])).toBe('schema');
    expect(findNoun(['-b', 'work', 'schema'])).toBe('schema');
    expect(findNoun(['--'])).toBeUndefined();
  });

  it('is found by the tree\'s own options: a global option added to the root takes its value, with nothing else to change', async () => {
    const { ctx, parts } = testContext();
    const program = await buildProgram(parts as Required<typeof parts>, [], () => ctx);
    program.option('--extra <value>', 'an option the scan was never told about').option('-x', 'a flag');
    expect(findNoun(['--extra', 'card', 'schema'], program)).toBe('schema');
    expect(findNoun(['-xb', 'work', 'schema'], program)).toBe('schema');
    expect(findNoun(['--extra=card', 'schema'], program)).toBe('schema');
  });

  it('reads a cluster of short flags as commander does: flag by flag, until one takes a value or is unknown', () => {
    expect(scanArgv(['-qv', 'card', 'list']).given).toEqual(new Set(['--quiet', '--verbose']));
    expect(scanArgv(['-vqb', 'work', 'card'])).toMatchObject({ noun: 'card', given: new Set(['--verbose', '--quiet', '--board']) });
    // -b takes the rest of the word; an unknown letter makes the rest one unknown option (no value taken).
    expect(scanArgv(['-bwork', 'schema'])).toMatchObject({ noun: 'schema', given: new Set(['--board']) });
    expect(scanArgv(['-zb', 'work', 'schema']).noun).toBe('work');
    // Help: -h and --help, or the end of a cluster of global flags (`-qh`); `-hq` is an unknown option.
    expect([['-qh'], ['card', '--help'], ['-h'], ['-hq'], ['--', '-h']].map((argv) => scanArgv(argv).help)).toEqual([true, true, true, false, false]);
    // A lone `-` is an operand (stdin), and a value is not an option: `-b -v` gives no --verbose.
    expect(scanArgv(['-b', '-v', '-', 'x'])).toMatchObject({ operands: ['-', 'x'], given: new Set(['--board']) });
  });

  it('`cardboard -qv` is verbose when an error is reported, like `-q -v` (a cause is shown)', async () => {
    const configDir = tempDir();
    writeFileSync(join(configDir, 'config.json'), '{ not json');
    const add = ['board', 'add', 'w', '--url', `${server.url}/api/aptlet/${server.boardId}`, '--token-stdin'];
    const apart = await runMain(['-q', '-v', ...add], { configDir, input: server.token });
    expect(apart.code).toBe(2);
    expect(apart.stderr).toMatch(/^error: The config file .* is not valid JSON\.$/m);
    expect(apart.stderr).toMatch(/^cause: SyntaxError/m);
    const together = await runMain(['-qv', ...add], { configDir, input: server.token });
    expect(together.code).toBe(2);
    const error = (stderr: string) => stderr.split('\n').find((line) => line.startsWith('error: '));
    expect(error(together.stderr)).toBe(error(apart.stderr));
    expect(together.stderr).toMatch(/^cause: SyntaxError/m);
  });

  it('`cardboard -- schema` runs schema (it printed nothing and exited 0)', async () => {
    const r = await runMain(['--', 'schema'], { env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Title');
    expect(r.stdout).toContain('Status');
  });

  it('`cardboard -qb <board> schema` runs schema', async () => {
    const r = await runMain(['-qb', server.boardId, 'schema'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Title');
  });

  it('`cardboard -- crad` is an unknown command, exit 2', async () => {
    const r = await runMain(['--', 'crad'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'crad'");
  });

  it('a placeholder group that runs (its module was not loaded) refuses with exit 2 instead of doing nothing', async () => {
    const { ctx, parts } = testContext();
    const program = await buildProgram(parts as Required<typeof parts>, [], () => ctx);
    await expect(program.parseAsync(['schema', '--json'], { from: 'user' })).rejects.toBeInstanceOf(UsageError);
  });
});
