// Every integer flag reads the one parser (src/units.ts parseInteger): digits only, a safe
// integer within the flag's range, else exit 2 naming the flag and the range. `--page 99999999999999999999999`
// used to be sent as `page=1e+23`.
import { describe, expect, it } from 'vitest';
import { parseInteger } from '../../src/units.js';
import { runMain } from '../helpers/cli.js';

const env = { CARDBOARD_BASE_URL: 'http://127.0.0.1:9', CARDBOARD_BOARD: 'b1', CARDBOARD_TOKEN: 'token-never-used' };

describe('integer flags', () => {
  it.each([
    [['card', 'list', '--page', '99999999999999999999999'], '--page must be a whole number 0 or more, got "99999999999999999999999"'],
    [['card', 'list', '--page', '1e3'], '--page must be a whole number 0 or more, got "1e3"'],
    [['card', 'list', '--page', '-1'], '--page must be a whole number 0 or more, got "-1"'],
    [['card', 'list', '--page', '1.5'], '--page must be a whole number 0 or more, got "1.5"'],
    [['card', 'list', '--page', '9007199254740992'], '--page must be a whole number 0 or more, got "9007199254740992"'],
    [['card', 'list', '--limit', '0'], '--limit must be a whole number 1 or more, got "0"'],
    [['import', 'cards.csv', '--concurrency', '1.5'], '--concurrency must be a whole number from 1 to 64, got "1.5"'],
    [['import', 'cards.csv', '--concurrency', '65'], '--concurrency must be a whole number from 1 to 64, got "65"'],
    [['webhook', 'replay', 'r.jsonl', '--to', 'http://127.0.0.1:9/', '--from', '1e2'], '--from must be a whole number 0 or more, got "1e2"'],
    [['emulator', '--seed-cards', '1e3'], '--seed-cards must be a whole number from 0 to 1000000, got "1e3"'],
    [['emulator', '--page-size', '99999999999999999999999'], '--page-size must be a whole number from 1 to 100000, got "99999999999999999999999"'],
  ])('%j exits 2 naming the flag and its range', async (args, message) => {
    const r = await runMain(args, { env });
    expect(r.stderr).toBe(`error: ${message}\n`);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
  });

  it('reads digits into safe integers and nothing else', () => {
    expect(parseInteger('0', '--n')).toBe(0);
    expect(parseInteger('9007199254740991', '--n')).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseInteger('64', '--n', 1, 64)).toBe(64);
    for (const bad of ['', ' ', '0x10', '1_000', '+1', '1e0', 'Infinity', 'NaN', '٣']) {
      expect(() => parseInteger(bad, '--n')).toThrow(/^--n must be a whole number 0 or more/);
    }
  });
});
