import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cli, ndjson } from '../commands/helpers.js';
import { tempDir } from '../helpers/cli.js';
import { BOARD_ID, CREATE_NEW_BOARD_ID, CREATE_NEW_TOKEN, type RunningEmulator, startTestEmulator, TEST_BOARDS, TOKEN } from '../helpers/emulator.js';

// A board id that needs percent-encoding in a URL: the POST URL carries it encoded.
const ODD = 'team a/b ü#1';
const ODD_TOKEN = 'tok-odd-board-7731';

let emu: RunningEmulator;
const postUrl = (board: string) => `${emu.url}/api/aptlet/${encodeURIComponent(board)}`;
const paths = () => emu.requests().map((r) => r.path);
const card = (board: string, id: string) => emu.state()[board]!.cards.find((c) => c._id === id);
/** CI-style env with the POST URL as CARDBOARD_BASE_URL and no CARDBOARD_BOARD. */
const envUrl = (url: string, token = ODD_TOKEN) => ({ env: { CARDBOARD_BASE_URL: url, CARDBOARD_BOARD: undefined, CARDBOARD_TOKEN: token } });

beforeAll(async () => {
  emu = await startTestEmulator({ boards: { ...structuredClone(TEST_BOARDS), [ODD]: { ...structuredClone(TEST_BOARDS[BOARD_ID]!), token: ODD_TOKEN } } });
});
afterAll(async () => {
  await emu.close();
});
beforeEach(() => {
  emu.resetRequests();
});

/** card put, get and list with `opts` (and the global options `globals`): each succeeds on the odd board, and every request went to it. */
async function putGetList(opts: Parameters<typeof cli>[2], globals: string[] = []) {
  const put = await cli(emu, [...globals, 'card', 'put', 'Name=From a POST URL'], opts);
  expect(put.code, put.stderr).toBe(0);
  const id = put.stdout.trim();
  const get = await cli(emu, [...globals, 'card', 'get', id, '--json'], opts);
  expect(get.code, get.stderr).toBe(0);
  expect(JSON.parse(get.stdout)).toMatchObject({ _id: id, Name: 'From a POST URL' });
  const list = await cli(emu, [...globals, 'card', 'list', '--all'], opts);
  expect(list.code, list.stderr).toBe(0);
  expect(ndjson(list.stdout).map((c) => c._id)).toContain(id);
  expect(card(ODD, id)).toMatchObject({ Name: 'From a POST URL' });
  expect(paths().every((p) => p.startsWith(`/api/aptlet/${encodeURIComponent(ODD)}`)), paths().join(' ')).toBe(true);
}

describe('the POST URL as the base URL', () => {
  it('CARDBOARD_BASE_URL = the POST URL, no CARDBOARD_BOARD: card put, get and list reach its board (the built binary)', async () => {
    await putGetList({ ...envUrl(postUrl(ODD)), spawn: true });
  });

  it('with /schema or a trailing slash after it, too', async () => {
    await putGetList(envUrl(`${postUrl(ODD)}/schema`));
    await putGetList(envUrl(`${postUrl(ODD)}/`));
  });

  it('--base-url = the POST URL: card put, get and list reach its board', async () => {
    await putGetList({ env: { CARDBOARD_BASE_URL: undefined, CARDBOARD_BOARD: undefined, CARDBOARD_TOKEN: ODD_TOKEN } }, ['--base-url', postUrl(ODD)]);
    // The same, given on the command line (the flag beats a CARDBOARD_BASE_URL of another board).
    emu.resetRequests();
    const put = await cli(emu, ['--base-url', postUrl(ODD), 'card', 'put', 'Name=Flag'], envUrl(postUrl(BOARD_ID)));
    expect(put.code, put.stderr).toBe(0);
    expect(card(ODD, put.stdout.trim())).toMatchObject({ Name: 'Flag' });
    const get = await cli(emu, ['card', 'get', put.stdout.trim(), '--base-url', postUrl(ODD)], envUrl('https://unused.example'));
    expect(ndjson(get.stdout)).toEqual([{ _id: put.stdout.trim(), Name: 'Flag' }]);
    const list = await cli(emu, ['card', 'list', '--base-url', postUrl(ODD), '--fields', 'Name'], envUrl('https://unused.example'));
    expect(ndjson(list.stdout)).toContainEqual({ _id: put.stdout.trim(), Name: 'Flag' });
  });

  it("its board beats the default board: the stored board's token is not sent to it", async () => {
    const configDir = tempDir();
    const add = await cli(emu, ['board', 'add', 'work', '--base-url', emu.url, '--id', BOARD_ID, '--token-stdin'], { configDir, input: TOKEN, env: { CARDBOARD_BASE_URL: undefined, CARDBOARD_BOARD: undefined, CARDBOARD_TOKEN: undefined } });
    expect(add.code, add.stderr).toBe(0);
    const put = await cli(emu, ['card', 'put', 'Name=CI'], { configDir, ...envUrl(postUrl(CREATE_NEW_BOARD_ID), CREATE_NEW_TOKEN) });
    expect(put.code, put.stderr).toBe(0);
    expect(card(CREATE_NEW_BOARD_ID, put.stdout.trim())).toMatchObject({ Name: 'CI' });
    const noToken = await cli(emu, ['card', 'list'], { configDir, env: { CARDBOARD_BASE_URL: postUrl(CREATE_NEW_BOARD_ID), CARDBOARD_BOARD: undefined, CARDBOARD_TOKEN: undefined } });
    expect(noToken.code).toBe(4);
    expect(noToken.stderr).toMatch(/^error: No token for board b-create-new \(from CARDBOARD_BASE_URL\)\.$/m);
  });

  it('--board or CARDBOARD_BOARD naming the same board goes ahead; another board is exit 2 naming both, and nothing is sent', async () => {
    const same = await cli(emu, ['card', 'list', '--board', ODD, '--base-url', postUrl(ODD)], { token: ODD_TOKEN, env: { CARDBOARD_BASE_URL: undefined } });
    expect(same.code, same.stderr).toBe(0);
    const sameEnv = await cli(emu, ['card', 'list'], { env: { CARDBOARD_BASE_URL: postUrl(ODD), CARDBOARD_BOARD: ODD, CARDBOARD_TOKEN: ODD_TOKEN } });
    expect(sameEnv.code, sameEnv.stderr).toBe(0);
    emu.resetRequests();

    const flag = await cli(emu, ['card', 'put', 'Name=x', '--board', BOARD_ID, '--base-url', postUrl(ODD)], { token: ODD_TOKEN });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain(`error: --base-url is the POST URL of board ${ODD}, but --board names board ${BOARD_ID}.\n`);
    expect(flag.stderr).toContain('hint: Give one board: drop --board, or give the base URL without /api/aptlet/<board id>.\n');
    const env = await cli(emu, ['card', 'get', 'c1'], { env: { CARDBOARD_BASE_URL: postUrl(ODD), CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: ODD_TOKEN } });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain(`error: CARDBOARD_BASE_URL is the POST URL of board ${ODD}, but CARDBOARD_BOARD names board ${BOARD_ID}.\n`);
    expect(paths()).toEqual([]);
  });

  it('board add takes --base-url as the POST URL, alone or with the same --id; another --id is exit 2', async () => {
    const configDir = tempDir();
    const opts = { configDir, input: ODD_TOKEN, env: { CARDBOARD_BASE_URL: undefined, CARDBOARD_BOARD: undefined, CARDBOARD_TOKEN: undefined } };
    const add = await cli(emu, ['board', 'add', 'odd', '--base-url', postUrl(ODD), '--token-stdin'], opts);
    expect(add.code, add.stderr).toBe(0);
    expect(await cli(emu, ['board', 'add', 'odd2', '--base-url', postUrl(ODD), '--id', ODD, '--token-stdin'], opts)).toMatchObject({ code: 0 });
    const boards = JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8')).boards;
    expect(boards.odd).toEqual({ id: ODD, baseUrl: emu.url, token: ODD_TOKEN });
    expect(boards.odd2).toEqual(boards.odd);
    const other = await cli(emu, ['board', 'add', 'x', '--base-url', postUrl(ODD), '--id', BOARD_ID, '--token-stdin'], opts);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(`error: --base-url is the POST URL of board ${ODD}, but --id names board ${BOARD_ID}.\n`);
  });
});
