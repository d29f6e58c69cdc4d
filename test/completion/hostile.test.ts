// Completion words are data. A board whose field names are
// shell code, globs and spaces is completed in a REAL bash: nothing runs, every candidate comes back as
// its own exact word, quoted for where the cursor is, and -b/--board on the line picks the fields.
// zsh (on a pseudo-terminal, pressing Tab) and fish (complete -C) run too where they are installed;
// CI has bash only, so those skip there.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, CHILD_KILL_MS, childEnv, runMain, tempDir } from '../helpers/cli.js';
import { type HostileServer, startHostileServer } from '../helpers/hostile-server.js';
import { python } from '../helpers/pty.js';

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
  script = (await runMain(['completion', 'bash'], { configDir })).stdout;
  shimDir = tempDir('cardboard-shim-');
  writeFileSync(join(shimDir, 'cardboard'), shim());
  chmodSync(join(shimDir, 'cardboard'), 0o755);
  writeFileSync(join(shimDir, 'completion.bash'), script);
});
afterAll(async () => {
  await hostile.close();
  await plain.close();
});

/**
 * `cardboard` on the shells' PATH: the built binary. Each shell's tests replay a command line they already
 * ran: with COMPLETION_MEMO (a directory, one per shell) in its environment, the first run of each command
 * line (argv and CARDBOARD_BOARD) runs the binary and keeps its stdout there, and the same line again gets
 * that stdout without a run. The shells ask the same few questions (`completion --list fields`, for this
 * or that board) at every Tab; the config and the cached schemas do not change during the file.
 */
function shim(): string {
  return [
    '#!/bin/sh',
    `[ -z "$COMPLETION_MEMO" ] && exec "${process.execPath}" "${BIN}" "$@"`,
    'kept="$COMPLETION_MEMO/$(printf \'%s\\n\' "$CARDBOARD_BOARD" "$@" | cksum | tr \' \' -)"',
    '[ -f "$kept" ] && exec cat "$kept"',
    `"${process.execPath}" "${BIN}" "$@" > "$kept.part"`,
    'rc=$?',
    'cat "$kept.part"',
    '[ $rc -eq 0 ] && mv "$kept.part" "$kept"',
    'exit $rc',
    '',
  ].join('\n');
}

/** The environment of a shell under test: `cardboard` on PATH, the config, and the shell's own COMPLETION_MEMO. */
function shellEnv(shell: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const memo = join(shimDir, `memo-${shell}`);
  mkdirSync(memo, { recursive: true });
  return { ...childEnv({ configDir, env: extra }), PATH: `${shimDir}:${process.env.PATH}`, HOME: configDir, COMPLETION_MEMO: memo };
}

/**
 * Complete in a real bash: COMP_WORDS as bash would split the line (words given exactly, through the
 * environment, so no quoting of ours is involved), then print each COMPREPLY element NUL-terminated.
 */
function complete(words: string[], extraEnv: Record<string, string> = {}): string[] {
  const env = shellEnv('bash', extraEnv);
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

describe('bash completion of flag values (choices from commander, aliases, fields)', () => {
  it("offers a flag's choices, a global's aliases, the first argument's choices; files for other values", () => {
    expect(complete(['cardboard', 'card', 'list', '--format', '']).sort()).toEqual(['csv', 'json', 'ndjson', 'table']);
    expect(complete(['cardboard', 'card', 'list', '--format', 'nd'])).toEqual(['ndjson']);
    expect(complete(['cardboard', 'card', 'list', '--format', '=', 'j'])).toEqual(['json']);
    expect(complete(['cardboard', '-b', 'evil', 'card', 'list', '--format', 'c'])).toEqual(['csv']);
    expect(complete(['cardboard', 'import', 'x.csv', '--empty', '']).sort()).toEqual(['omit', 'send']);
    expect(complete(['cardboard', 'import', 'x.csv', '--input-format', 't'])).toEqual(['tsv']);
    expect(complete(['cardboard', 'completion', '']).sort()).toEqual(['bash', 'fish', 'zsh']);
    expect(complete(['cardboard', 'completion', '--list', '']).sort()).toEqual(['aliases', 'fields']);
    expect(complete(['cardboard', '-b', '']).sort()).toEqual(['evil', 'plain']);
    expect(complete(['cardboard', 'card', 'list', '-b', 'e'])).toEqual(['evil']);
    // A value that is not a field (a card id, a duration): no Field= words, no flags.
    expect(complete(['cardboard', 'card', 'put', '--id', ''])).toEqual([]);
    expect(complete(['cardboard', '--timeout', ''])).toEqual([]);
    expect(complete(['cardboard', 'card', 'list', '--format', 'csv', '--f']).sort()).toEqual(['--fields', '--format']);
    // --type Field=T: the field with its "=", then the types.
    expect(complete(['cardboard', '-b', 'evil', 'import', 'x.csv', '--type', 'St'])).toEqual(['Status=', 'Stage=']);
    expect(complete(['cardboard', 'import', 'x.csv', '--type', 'Plain\\ One', '=', 'n'])).toEqual(['number']);
    expect(complete(['cardboard', 'import', 'x.csv', '--type', 'Status', '=']).sort()).toEqual(['boolean', 'json', 'number', 'string']);
    // help <noun> <verb> completes like <noun> <verb>.
    expect(complete(['cardboard', 'he'])).toEqual(['help']);
    expect(complete(['cardboard', 'help', 'ca'])).toEqual(['card']);
    expect(complete(['cardboard', 'help', 'card', '']).sort()).toEqual(['get', 'list', 'put']);
    expect(complete(['cardboard', 'card', 'help', 'p'])).toEqual(['put']);
  });
});

describe('bash completion of server words', () => {
  it('runs nothing, and gives back every field as its own word, quoted, at each place fields are completed', () => {
    // The board from the environment (the way the old script could be reached too): nothing may run.
    const fromEnv = complete(['cardboard', 'import', 'x.csv', '--match-on', ''], { CARDBOARD_BOARD: 'evil' });
    expect(readdirSync(trap)).toEqual([]);
    expect(unquote(fromEnv).sort()).toEqual([...OFFERED].sort());
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
    // The comma of a --fields list is left bare (`Status\,Due` was offered); a comma in a name is quoted.
    expect(complete(['cardboard', '-b', 'evil', 'card', 'list', '--fields', 'Status,Due'])).toEqual(['Status,Due\\ Date', 'Status,Due\\ Time']);
    expect(complete(['cardboard', '-b', 'evil', 'card', 'list', '--fields', 'Status,$'])).toEqual([`Status,\\$\\(touch\\ ${trap}/X\\)`]);
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

/**
 * Whether a shell is on PATH. Without one its tests skip, unless CARDBOARD_REQUIRE_SHELLS=1 (.ci/run, which
 * installs them): there a missing shell is a failure, not a silent skip.
 */
const REQUIRED = process.env.CARDBOARD_REQUIRE_SHELLS === '1';
const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

describe.runIf(REQUIRED)('the shells whose completion is tested', () => {
  it.each(['bash', 'zsh', 'fish', 'python3'])('%s is installed (CARDBOARD_REQUIRE_SHELLS=1)', (cmd) => {
    expect(has(cmd), `${cmd} is missing: apt-get install ${cmd}`).toBe(true);
  });
});

/**
 * Types each line into an interactive zsh or bash on a pseudo-terminal, presses Tab, then Ctrl-T, bound to
 * a widget that writes the line to a file: what the shell itself put on the command line. Ctrl-T begins no
 * other key sequence of either shell (Ctrl-X does: the shell would wait out its key timeout after each line).
 * The first line is typed once the shell has printed READY, after the setup. The widget writes beside the
 * file and renames it into place, so the file never exists half-written; each line may take up to 90 s to
 * show it (each completion runs cardboard, slow on a loaded machine).
 */
const PTY_DRIVER = String.raw`
import json, os, pty, select, sys, time
script, cases, out, shell = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4]
pid, fd = pty.fork()
if pid == 0:
    if shell == 'zsh': os.execvp('zsh', ['zsh', '-f', '-i'])
    os.execvp('bash', ['bash', '--norc', '--noprofile', '-i'])
def drain(t):
    while True:
        r, _, _ = select.select([fd], [], [], t)
        if not r: return
        try:
            if not os.read(fd, 65536): return
        except OSError: return
if shell == 'zsh':
    setup = "autoload -U compinit && compinit -u -D; source '%s'; _dump() { print -rn -- \"$BUFFER\" > '%s.part' && mv '%s.part' '%s'; }; zle -N _dump; bindkey '^T' _dump"
else:
    setup = "source '%s'; bind -x '\"\\C-t\": printf %%s \"$READLINE_LINE\" > %s.part && mv %s.part %s'"
os.write(fd, ((setup % (script, out, out, out)) + "; printf '%s%s\\n' REA DY\n").encode())
seen, deadline = b'', time.time() + 90
while b'READY' not in seen:
    if time.time() > deadline: sys.exit('the shell printed no READY after its setup: %r' % seen[-300:])
    if select.select([fd], [], [], 1)[0]: seen += os.read(fd, 65536)
results = []
for line in cases:
    if os.path.exists(out): os.unlink(out)
    os.write(fd, (line + '\t\x14').encode())
    deadline = time.time() + 90
    while not os.path.exists(out) and time.time() < deadline: drain(0.01)
    results.append(open(out).read() if os.path.exists(out) else None)
    os.write(fd, b'\x15')
os.write(fd, b'exit\n')
drain(0.2)
print(json.dumps(results))
`;

/** Press Tab after each typed line in a real shell on a pty; what is on the line afterwards. */
function onPty(shell: 'bash' | 'zsh', script: string, typed: string[]): unknown {
  const out = join(shimDir, `${shell}-line`);
  const r = spawnSync(python(), ['-c', PTY_DRIVER, script, JSON.stringify(typed), out, shell], {
    env: shellEnv(`${shell}-pty`),
    encoding: 'utf8',
    cwd: trap,
    timeout: CHILD_KILL_MS,
  });
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout);
}

describe.skipIf(!has('zsh') || !has('python3'))('zsh completion of server words (real zsh on a pty)', () => {
  it('quotes every field as zsh does, runs nothing, and takes -b/--board from the line', async () => {
    const file = join(shimDir, '_cardboard');
    writeFileSync(file, (await runMain(['completion', 'zsh'], { configDir })).stdout);
    const cases: Array<[string, string]> = [
      ['cardboard -b evil card put Due\\ D', 'cardboard -b evil card put Due\\ Date='],
      ['cardboard -b evil import x.csv --match-on \\$', `cardboard -b evil import x.csv --match-on \\$\\(touch\\ ${trap}/X\\) `],
      ['cardboard -b evil import x.csv --match-on \\`', `cardboard -b evil import x.csv --match-on \\\`touch\\ ${trap}/Y\\\` `],
      ['cardboard -b evil import x.csv --skip-column "Due D', 'cardboard -b evil import x.csv --skip-column "Due Date" '],
      // A comma list stays open (no space) for the next name.
      ['cardboard -b evil card list --fields Status,Due\\ T', 'cardboard -b evil card list --fields Status,Due\\ Time'],
      ['cardboard card list --fields Plain\\ One,Plain\\ T', 'cardboard card list --fields Plain\\ One,Plain\\ Two'],
      ['cardboard --board=evil card put Statu', 'cardboard --board=evil card put Status='],
      ['cardboard card put Pl', 'cardboard card put Plain\\ '],
    ];
    expect(onPty('zsh', file, cases.map(([typed]) => typed))).toEqual(cases.map(([, want]) => want));
    expect(readdirSync(trap)).toEqual([]);
  });

  it('completes verbs, flags and flag values: choices, board aliases, the shell argument', () => {
    const file = join(shimDir, '_cardboard');
    const cases: Array<[string, string]> = [
      ['cardboard card list --format nd', 'cardboard card list --format ndjson '],
      ['cardboard card list --format=cs', 'cardboard card list --format=csv '],
      ['cardboard card list --form', 'cardboard card list --format '],
      ['cardboard import x.csv --empty s', 'cardboard import x.csv --empty send '],
      ['cardboard completion fi', 'cardboard completion fish '],
      ['cardboard card list -b ev', 'cardboard card list -b evil '],
      ['cardboard --board pl', 'cardboard --board plain '],
      ['cardboard board use ev', 'cardboard board use evil '],
      ['cardboard board remove p', 'cardboard board remove plain '],
      ['cardboard board set-signing-key e', 'cardboard board set-signing-key evil '],
      ['cardboard webhook l', 'cardboard webhook listen '],
      ['cardboard card list --ti', 'cardboard card list --timeout '],
      ['cardboard help webhook li', 'cardboard help webhook listen '],
      ['cardboard -b evil import x.csv --type Statu', 'cardboard -b evil import x.csv --type Status='],
      ['cardboard import x.csv --type Plain\\ One=bo', 'cardboard import x.csv --type Plain\\ One=boolean '],
    ];
    expect(onPty('zsh', file, cases.map(([typed]) => typed))).toEqual(cases.map(([, want]) => want));
  });

  it('lists each verb and flag with its description (compadd -d), candidates unchanged', async () => {
    writeFileSync(join(shimDir, '_cardboard'), (await runMain(['completion', 'zsh'], { configDir })).stdout);
    // The script's own function, run in zsh with compadd replaced by one that prints what it was given.
    const listed = (words: string[]): string[] => {
      const program = [
        'compdef() { :; }',
        'compadd() { local _d; while (($#)); do case $1 in -d) _d=$2; shift 2;; --) shift; break;; *) shift;; esac; done; print -rl -- "${(@P)_d}" -- "$@"; }',
        `source '${join(shimDir, '_cardboard')}'`,
        `words=(${words.map((w) => `'${w}'`).join(' ')}); CURRENT=${words.length}; _cardboard`,
      ].join('\n');
      const r = spawnSync('zsh', ['-f', '-c', program], { env: shellEnv('zsh'), encoding: 'utf8', cwd: trap });
      expect(r.stderr).toBe('');
      return r.stdout.split('\n').map((l) => l.trimEnd());
    };
    const verbs = listed(['cardboard', 'card', '']);
    expect(verbs).toEqual(expect.arrayContaining(['get   -- Show one card by its _id', '--', 'get', 'put', 'list']));
    const flags = listed(['cardboard', 'card', 'list', '--']);
    expect(flags.find((l) => l.startsWith('--format '))).toMatch(/^--format +-- output format/);
    expect(flags.find((l) => l.startsWith('--board '))).toMatch(/^--board +-- board alias or id/);
    expect(flags).toContain('--fields');
  });
});

describe.skipIf(!has('fish'))('fish completion of server words (real fish, complete -C)', () => {
  const file = () => join(shimDir, 'cardboard.fish');
  const candidates = (line: string): string[] => {
    const r = spawnSync('fish', ['--no-config', '-c', `source '${file()}'; complete -C"$LINE"`], {
      env: shellEnv('fish', { LINE: line }),
      encoding: 'utf8',
      cwd: trap,
    });
    expect(r.stderr).toBe('');
    return r.stdout.split('\n').filter(Boolean).map((l) => l.split('\t')[0]!).sort();
  };
  beforeAll(async () => {
    writeFileSync(file(), (await runMain(['completion', 'fish'], { configDir })).stdout);
  });

  it('gives every field as one exact candidate, runs nothing, and takes -b/--board from the line', () => {
    expect(candidates('cardboard -b evil import x.csv --match-on ')).toEqual([...OFFERED].sort());
    expect(candidates('cardboard --board evil import x.csv --skip-column ')).toEqual([...OFFERED].sort());
    expect(candidates('cardboard -b evil card put D')).toEqual(['Due Date=', 'Due Time=']);
    // A comma list: each candidate ends in its comma, so fish adds no space (--fields skips the empty name).
    expect(candidates('cardboard --board=evil card list --fields Status,Du')).toEqual(['Status,Due Date,', 'Status,Due Time,']);
    expect(candidates('cardboard card put ')).toEqual(['Plain One=', 'Plain Two=']);
    expect(candidates('cardboard -b evil import x.csv --map Title=Due')).toEqual(['Title=Due Date', 'Title=Due Time']);
    expect(candidates('cardboard card ')).toEqual(['get', 'list', 'put']);
    expect(readdirSync(trap)).toEqual([]);
  });

  it('completes flags and flag values: choices, board aliases, the shell argument', () => {
    expect(candidates('cardboard card list --format ')).toEqual(['csv', 'json', 'ndjson', 'table']);
    expect(candidates('cardboard card list --format=n')).toEqual(['--format=ndjson']);
    expect(candidates('cardboard import x.csv --empty ')).toEqual(['omit', 'send']);
    expect(candidates('cardboard completion ')).toEqual(['bash', 'fish', 'zsh']);
    expect(candidates('cardboard -b ')).toEqual(['evil', 'plain']);
    expect(candidates('cardboard card list --board ')).toEqual(['evil', 'plain']);
    expect(candidates('cardboard card list --f')).toEqual(['--fields', '--format']);
    expect(candidates('cardboard card list -b evil --fields Du')).toEqual(['Due Date,', 'Due Time,']);
    expect(candidates('cardboard board use ')).toEqual(['evil', 'plain']);
    expect(candidates('cardboard board remove e')).toEqual(['evil']);
    expect(candidates('cardboard board rm e')).toEqual(['evil']);
    // Past a verb typed by its alias, the board verbs are no longer offered: only the aliases.
    expect(candidates('cardboard board rm ')).toEqual(['evil', 'plain']);
    expect(candidates('cardboard board set-signing-key p')).toEqual(['plain']);
    expect(candidates('cardboard -b evil import x.csv --type D')).toEqual(['Due Date=', 'Due Time=']);
    expect(candidates('cardboard import x.csv --type Status=')).toEqual(['Status=boolean', 'Status=json', 'Status=number', 'Status=string']);
    expect(candidates('cardboard help ')).toEqual(['api', 'board', 'card', 'comment', 'completion', 'emulator', 'import', 'mirror', 'query', 'schema', 'webhook']);
    expect(candidates('cardboard help card ')).toEqual(['get', 'list', 'put']);
  });
});

describe.skipIf(!has('python3'))('bash completion on a pty (readline inserts what the script offers)', () => {
  it('quotes as the user typed: bare, after a backslash, inside single or double quotes; runs nothing', () => {
    const file = join(shimDir, 'completion.bash');
    const cases: Array<[string, string]> = [
      ['cardboard -b evil card put Due\\ D', 'cardboard -b evil card put Due\\ Date='],
      ['cardboard -b evil import x.csv --match-on \\$', `cardboard -b evil import x.csv --match-on \\$\\(touch\\ ${trap}/X\\) `],
      ['cardboard -b evil import x.csv --match-on "$', `cardboard -b evil import x.csv --match-on "\\$(touch ${trap}/X)" `],
      ["cardboard -b evil import x.csv --match-on 'Due D", "cardboard -b evil import x.csv --match-on 'Due Date' "],
      ["cardboard -b evil import x.csv --match-on 'It", "cardboard -b evil import x.csv --match-on 'It'\\''s' "],
      ['cardboard -b evil import x.csv --map Title=Due\\ T', 'cardboard -b evil import x.csv --map Title=Due\\ Time '],
      ['cardboard card l', 'cardboard card list '],
      ['cardboard card list --format nd', 'cardboard card list --format ndjson '],
      ['cardboard import x.csv --empty s', 'cardboard import x.csv --empty send '],
      ['cardboard -b ev', 'cardboard -b evil '],
      // A comma list: the comma left bare and the word open (no space) for the next name.
      ['cardboard card list --fields Plain\\ O', 'cardboard card list --fields Plain\\ One'],
      ['cardboard card list --fields Plain\\ One,Plain\\ T', 'cardboard card list --fields Plain\\ One,Plain\\ Two'],
      ['cardboard board use ev', 'cardboard board use evil '],
      ['cardboard board remove p', 'cardboard board remove plain '],
      ['cardboard board set-signing-key e', 'cardboard board set-signing-key evil '],
    ];
    expect(onPty('bash', file, cases.map(([typed]) => typed))).toEqual(cases.map(([, want]) => want));
    expect(readdirSync(trap)).toEqual([]);
  });
});
