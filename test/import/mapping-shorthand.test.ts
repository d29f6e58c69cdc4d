// A column written short for a field (`Prio`, `Desc`, `Est. hrs`) is proposed in the mapping prompt and in
// the refusal's --map flags, and never mapped by itself: without a prompt only an exact name maps.
import { describe, expect, it } from 'vitest';
import { askMapping, type Choice, type Prompter } from '../../src/commands/import/interactive.js';
import { resolveMapping, unmappedError } from '../../src/import/mapping.js';

const FIELDS = ['Name', 'Priority', 'Description', 'Estimated hours'];
const HEADERS = ['Name', 'Prio', 'Desc', 'Est. hrs', 'Colour'];

/** A prompter that takes every default and records the question with it. */
function enter(): { prompter: Prompter; asked: string[] } {
  const asked: string[] = [];
  const prompter: Prompter = {
    async select<T>(message: string, choices: Choice<T>[], defaultValue?: T) {
      const preset = choices.find((c) => c.value === defaultValue)!;
      asked.push(`${message} default: ${preset.name}`);
      return preset.value;
    },
    async confirm() {
      return false;
    },
    async input() {
      return '';
    },
  };
  return { prompter, asked };
}

describe('mapping columns written short', () => {
  it('a non-interactive run maps only exact names: Prio, Desc and Est. hrs stay unmapped, with the field proposed', () => {
    const { columns, unmapped } = resolveMapping(HEADERS, FIELDS, { map: {}, skipColumns: [] });
    expect(columns.map((c) => [c.header, c.target])).toEqual([['Name', { kind: 'field', field: 'Name' }]]);
    expect(unmapped).toEqual([
      { header: 'Prio', index: 1, suggestion: 'Priority' },
      { header: 'Desc', index: 2, suggestion: 'Description' },
      { header: 'Est. hrs', index: 3, suggestion: 'Estimated hours' },
      { header: 'Colour', index: 4 },
    ]);
    const flags: string[] = [];
    const err = unmappedError(unmapped, (f) => {
      flags.push(...f);
      return 'cardboard import x.csv …';
    });
    expect(err.exitCode).toBe(2);
    expect(err.message).toContain("column 'Prio': no field of that name; closest is 'Priority': add --map Prio=Priority");
    expect(flags).toEqual(['--map', 'Prio=Priority', '--map', 'Desc=Description', '--map', 'Est. hrs=Estimated hours', '--skip-column', 'Colour']);
  });

  it('the prompt proposes them: Enter maps Prio, Desc and Est. hrs to their fields and skips Colour', async () => {
    const { columns, unmapped } = resolveMapping(HEADERS, FIELDS, { map: {}, skipColumns: [] });
    const { prompter, asked } = enter();
    const out = await askMapping(prompter, columns, unmapped, FIELDS);
    expect(out.map((c) => [c.header, c.target.kind === 'field' ? c.target.field : c.target.kind])).toEqual([
      ['Name', 'Name'],
      ['Prio', 'Priority'],
      ['Desc', 'Description'],
      ['Est. hrs', 'Estimated hours'],
      ['Colour', 'skip'],
    ]);
    expect(asked[0]).toBe('CSV column "Prio" (empty in the first rows) goes to which field? default: Priority  (closest)');
  });

  it('a proposed field another column already sends is not the default: Enter skips', async () => {
    const { columns, unmapped } = resolveMapping(['Priority', 'Prio'], ['Priority', 'Name'], { map: {}, skipColumns: [] });
    expect(unmapped).toEqual([{ header: 'Prio', index: 1, suggestion: 'Priority' }]);
    const { prompter, asked } = enter();
    const out = await askMapping(prompter, columns, unmapped, ['Priority', 'Name']);
    expect(out[1]!.target).toEqual({ kind: 'skip' });
    expect(asked[0]).toMatch(/default: skip this column$/);
  });
});
