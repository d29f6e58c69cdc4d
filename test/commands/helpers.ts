import { expect } from 'vitest';
import { type CliResult, type RunOptions, runMain, tempDir } from '../helpers/cli.js';
import { BOARD_ID, CREATE_FIELDS_TOKEN, CREATE_NEW_TOKEN, type RunningEmulator, TOKEN } from '../helpers/emulator.js';

const SECRETS = [TOKEN, CREATE_NEW_TOKEN, CREATE_FIELDS_TOKEN];

/** Run the built CLI against the emulator with CI-style env only; every result is checked for leaked tokens. */
export async function cli(
  emu: RunningEmulator,
  args: string[],
  opts: RunOptions & { board?: string; token?: string } = {},
): Promise<CliResult> {
  const board = opts.board ?? BOARD_ID;
  const r = await runMain(args, {
    ...opts,
    configDir: opts.configDir ?? tempDir(),
    env: {
      CARDBOARD_BASE_URL: emu.url,
      CARDBOARD_BOARD: board,
      CARDBOARD_TOKEN: opts.token ?? emu.boards[board]!.token,
      ...opts.env,
    },
  });
  for (const secret of [...SECRETS, opts.token ?? '']) {
    if (secret === '') continue;
    expect(r.stdout).not.toContain(secret);
    expect(r.stderr).not.toContain(secret);
  }
  return r;
}

/** Put each card of `values` (each the operands of one `card put`) on the test board in turn, each one succeeding; the board's card ids afterwards. */
export async function putCards(emu: RunningEmulator, values: readonly string[][]): Promise<string[]> {
  for (const v of values) {
    const r = await cli(emu, ['card', 'put', ...v]);
    expect(r.code, r.stderr).toBe(0);
  }
  return emu.state()[BOARD_ID]!.cards.map((c) => c._id);
}

/** Parse NDJSON output into records. */
export function ndjson(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}
