// Issue 11 §1 (and issue 12's bash findings): completion words are data. A board whose field names are
// shell code, globs and spaces is completed in a REAL bash: nothing runs, every candidate comes back as
// its own exact word, quoted for where the cursor is, and -b/--board on the line picks the fields.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, childEnv, runCli, runMain, tempDir } from '../helpers/cli.js';
import { type HostileServer, startHostileServer } from '../helpers/hostile-server.js';

const trap = tempDir('cardboard-trap-');
const RUN_X = `$(touch ${trap}/X)`;
const RUN_Y = `\`touch ${trap}/Y\``;
const FIELDS = [RUN_X, RUN_Y, '*', 'Due Date', 'Due Time', "It's", 'Status', 'Stage', 'line\nbreak', 'esc\u001b]0;pwned\u0007'];
const OFFERED = FIELDS.filter((f) => !/[\n\u001b]/.test(f));

let hostile: HostileServer;
let plain: HostileServer;
let configDir: string;
let script: string;
let shimDir: string;

beforeAll(async () => {
  hostile = await startHostileServer({ mode: 'plain', fields: FIELDS, boardId: 'hostileBoard0001' });
  plain = await startHostileServer({ mode: 'plain', fields: ['Plain One', 'Plain Two'], boardId: 'plainBoard000001' });
  configDir = tempDir();
  writeFileSync(
    join(configDir, 'config.json'),
    JSON.stringify({
      defaultBoard: 'plain',
      boards: {
        plain: { id: plain.boardId, baseUrl: plain.url, token: plain.token },
        evil: { id: hostile.boardId, baseUrl: hostile.url, token: hostile.token },
      },
    }),
    { mode: 0o600 },
  );
  // Completion reads the cached schemas (offline, instant): fill them.
  for (const board of ['plain', 'evil']) expect((await runMain(['schema', '-b', board], { configDir })).code).toBe(0);
  script = (await runCli(['completion', 'bash'], { configDir })).stdout;
  shimDir = tempDir('cardboard-shim-');
  writeFileSync(join(shimDir, 'cardboard'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(join(shimDir, 'cardboard'), 0o755);
  writeFileSync(join(shimDir, 'completion.bash'), script);
});
afterAll(async () => {
  await hostile.close();
  await plain.close();
});

/**
 * Complete in a real bash: COMP_WORDS as bash would split the line (words given exactly, through the
 * environment, so no quoting of ours is involved), then print each COMPREPLY element NUL-terminated.
 */
function complete(words: string[]): string[] {
  const env: NodeJS.ProcessEnv = { ...childEnv({ configDir }), PATH: `${shimDir}:${process.env.PATH}` };
  words.forEach((w, i) => (env[`W${i}`] = w));
  const line = words.join(' ');
  const program = [
    `source '${join(shimDir, 'completion.bash')}'`,
    `COMP_WORDS=(); for ((i = 0; i < ${words.length}; i++)); do v=W$i; COMP_WORDS+=("\${!v}"); done`,
    `COMP_CWORD=${words.length - 1}; COMP_LINE="$LINE"; COMP_POINT=\${#COMP_LINE}`,
    '_cardboard',
    `((\${#COMPREPLY[@]})) && printf '%s\\0' "\${COMPREPLY[@]}"`,
    'exit 0',
  ].join('\n');
  const r = spawnSync('bash', ['-c', program], { env: { ...env, LINE: line }, encoding: 'utf8', cwd: trap });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return r.stdout.split('\0').slice(0, -1);
}

/** What bash makes of a word on a command line (no expansion other than quote removal is possible here). */
function unquote(words: string[]): string[] {
  const r = spawnSync('bash', ['-c', `for w in ${words.join(' ')}; do printf '%s\\0' "$w"; done`], { encoding: 'utf8', cwd: trap });
  return r.stdout.split('\0').slice(0, -1);
}

describe('bash completion of server words', () => {
  it('runs nothing, and gives back every field as its own word, quoted, at each place fields are completed', () => {
    const places: string[][] = [
      ['cardboard', '-b', 'evil', 'import', 'x.csv', '--match-on', ''],
      ['cardboard', '-b', 'evil', 'import', 'x.csv', '--skip-column', ''],
      ['cardboard', '-b', 'evil', 'import', 'x.csv', '--map', ''],
      ['cardboard', '-b', 'evil', 'card', 'list', '--fields', ''],
      ['cardboard', '--board', 'evil', 'card', 'list', '--fields', ''],
      ['cardboard', '--board', '=', 'evil', 'card', 'list', '--fields', ''],
    ];
    for (const words of places) {
      const got = complete(words);
      expect(got.length, words.join(' ')).toBe(OFFERED.length);
      expect(unquote(got).sort()).toEqual([...OFFERED].sort());
    }
    const put = complete(['cardboard', '-b', 'evil', 'card', 'put', '']);
    expect(unquote(put).sort()).toEqual(OFFERED.map((f) => `${f}=`).sort());
    expect(readdirSync(trap)).toEqual([]);
    expect(existsSync(join(trap, 'X'))).toBe(false);
  });

  it('completes a name with a space as one quoted word, bare, after a backslash, inside quotes', () => {
    expect(complete(['cardboard', '-b', 'evil', 'import', 'x.csv', '--match-on', 'Due D'.slice(0, 3)])).toEqual(['Due\\ Date', 'Due\\ Time']);
    expect(complete(['cardboard', '-b', 'evil', 'import', 'x.csv', '--match-on', 'Due\\ D'])).toEqual(['Due\\ Date']);
    // Inside an open quote readline inserts the text after the quote, and closes it.
    expect(complete(['cardboard', '-b', 'evil', 'import', 'x.csv', '--match-on', "'Due D"])).toEqual(['Due Date']);
    expect(complete(['cardboard', '-b', 'evil', 'import', 'x.csv', '--match-on', '"Due D'])).toEqual(['Due Date']);
    expect(complete(['cardboard', '-b', 'evil', 'import', 'x.csv', '--match-on', "'It"])).toEqual(["It'\\''s"]);
    expect(complete(['cardboard', '-b', 'evil', 'import', 'x.csv', '--match-on', '"$'])).toEqual([`\\${RUN_X}`]);
    expect(complete(['cardboard', '-b', 'evil', 'card', 'put', 'Due'])).toEqual(['Due\\ Date=', 'Due\\ Time=']);
    expect(complete(['cardboard', '-b', 'evil', 'card', 'put', 'St'])).toEqual(['Status=', 'Stage=']);
    expect(unquote(complete(['cardboard', '-b', 'evil', 'card', 'list', '--fields', 'Status,Due']))).toEqual(['Status,Due Date', 'Status,Due Time']);
    expect(complete(['cardboard', '-b', 'evil', 'import', 'x.csv', '--map', 'Title', '=', 'Sta'])).toEqual(['Status', 'Stage']);
    expect(complete(['cardboard', '-b', 'evil', 'card', 'put', 'Status', '=', ''])).toEqual([]);
    expect(readdirSync(trap)).toEqual([]);
  });

  it('takes the fields of the board named on the line, else of the default board', () => {
    expect(complete(['cardboard', 'card', 'put', 'Pl'])).toEqual(['Plain\\ One=', 'Plain\\ Two=']);
    expect(complete(['cardboard', '-b', 'plain', 'card', 'put', 'Pl'])).toEqual(['Plain\\ One=', 'Plain\\ Two=']);
    expect(complete(['cardboard', '-b', 'evil', 'card', 'put', 'Pl'])).toEqual([]);
    expect(complete(['cardboard', 'card', 'put', '--board', 'evil', 'St'])).toEqual(['Status=', 'Stage=']);
  });

  it('gives several commands and flags as separate words (get⏎put⏎list went into the line)', () => {
    expect(complete(['cardboard', 'card', '']).sort()).toEqual(['get', 'list', 'put']);
    expect(complete(['cardboard', 'card', 'list', '--f']).sort()).toEqual(['--fields', '--format']);
    expect(complete(['cardboard', '--b']).sort()).toEqual(['--base-url', '--board']);
    expect(complete(['cardboard', 'schema', '--board', '']).sort()).toEqual(['evil', 'plain']);
  });
});
