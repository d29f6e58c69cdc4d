// `cardboard -- schema` printed nothing and exited 0: the word after `--` was dispatched by
// commander to a placeholder the start-up never loaded. findNoun now reads argv as commander does, and a
// placeholder that runs anyway refuses (exit 2) instead of succeeding silently.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { buildProgram, findNoun } from '../../src/program.js';
import { testContext } from '../io/buffers.js';
import { runMain } from '../helpers/cli.js';
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
