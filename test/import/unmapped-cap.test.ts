// 5,000 unknown CSV columns once made a 525 KB error. The refusal lists the first ten
// with their suggestions and counts the rest; --verbose lists every one.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveMapping, UNMAPPED_SHOWN, unmappedError } from '../../src/import/mapping.js';
import { describeUnknownKeys } from '../../src/schema/match.js';
import { runMain, tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, startTestEmulator, TOKEN } from '../helpers/emulator.js';

const headers = (n: number) => ['Name', 'Stauts', ...Array.from({ length: n - 2 }, (_, i) => `Unknown column number ${i}`)];

describe('the unmapped-column refusal', () => {
  it('lists ten of 5,000 columns, counts the rest, and points at --map-file', () => {
    const { unmapped } = resolveMapping(headers(5_001), ['Name', 'Status'], { map: Object.create(null), skipColumns: [] });
    expect(unmapped).toHaveLength(5_000);
    const err = unmappedError(unmapped, (flags) => `cardboard import f.csv ${flags.join(' ')}`);
    expect(err.message.split('\n')).toHaveLength(1 + UNMAPPED_SHOWN + 1);
    expect(err.message).toMatch(/^5,000 CSV columns match no board field/);
    expect(err.message).toContain("column 'Stauts': no field of that name; closest is 'Status'");
    expect(err.message).toContain('... and 4,990 more (run with --verbose to list them all)');
    expect(err.hint).toContain('--map-file');
    expect(err.message.length + (err.hint ?? '').length).toBeLessThan(2_000);
    const all = unmappedError(unmapped, () => '', true);
    expect(all.message.split('\n')).toHaveLength(5_001);
  });

  it('keeps the command to paste for a few columns', () => {
    const { unmapped } = resolveMapping(headers(4), ['Name', 'Status'], { map: Object.create(null), skipColumns: [] });
    const err = unmappedError(unmapped, (flags) => `cardboard import f.csv ${flags.join(' ')}`);
    expect(err.hint).toBe("cardboard import f.csv --map Stauts=Status --skip-column Unknown column number 0 --skip-column Unknown column number 1   (or --map-file F.json; run on a terminal to map interactively)");
  });

  it('card put names ten unknown keys and counts the rest', () => {
    const text = describeUnknownKeys(Array.from({ length: 5_000 }, (_, i) => ({ key: `k${i}` })));
    expect(text).toMatch(/^unknown fields 'k0', 'k1', .*'k9' and 4,990 more$/);
  });
});

describe('import with 5,000 unknown columns', () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startTestEmulator();
  });
  afterAll(() => emu.close());

  it('fails with exit 2 and a short message; --verbose lists every column', async () => {
    const file = join(tempDir(), 'wide.csv');
    const h = headers(5_001);
    writeFileSync(file, `${h.join(',')}\n${h.map(() => 'v').join(',')}\n`);
    const env = { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN };
    const r = await runMain(['import', file], { env });
    expect(r.code).toBe(2);
    expect(r.stderr.length).toBeLessThan(3_000);
    expect(r.stderr).toContain('and 4,990 more');
    const v = await runMain(['import', file, '--verbose'], { env });
    expect(v.code).toBe(2);
    expect(v.stderr).toContain("column 'Unknown column number 4998'");
  });
});
