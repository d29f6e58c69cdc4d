// `cardboard completion`: the scripts and lists printed by the CLI (in process), and the bash script run in a
// real bash whose `cardboard` on PATH is the built binary.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, childEnv, runMain, tempDir } from '../helpers/cli.js';

/** Run the generated bash script in a real bash with `cardboard` on PATH and return COMPREPLY for `line`. */
function complete(script: string, words: string[], configDir: string): string[] {
  const shimDir = tempDir('cardboard-shim-');
  const shim = join(shimDir, 'cardboard');
  writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(shim, 0o755);
  const file = join(shimDir, 'completion.bash');
  writeFileSync(file, script);
  const quoted = words.map((w) => `'${w}'`).join(' ');
  const program = `source '${file}'; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _cardboard; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const env = { ...childEnv({ configDir }), PATH: `${shimDir}:${process.env.PATH}` };
  const r = spawnSync('bash', ['-c', program], { env, encoding: 'utf8' });
  expect(r.stderr).toBe('');
  return r.stdout.split('\n').filter(Boolean);
}

describe('cardboard completion', () => {
  it('prints a bash script that bash accepts and that completes commands, verbs and flags', async () => {
    const configDir = tempDir();
    const r = await runMain(['completion', 'bash'], { configDir });
    expect(r.code).toBe(0);
    expect(spawnSync('bash', ['-n'], { input: r.stdout }).status).toBe(0);
    expect(complete(r.stdout, ['cardboard', 'ca'], configDir)).toEqual(['card']);
    expect(complete(r.stdout, ['cardboard', 'card', ''], configDir).sort()).toEqual(['get', 'list', 'put']);
    expect(complete(r.stdout, ['cardboard', 'card', 'put', '--allow'], configDir)).toEqual(['--allow-unknown']);
    expect(complete(r.stdout, ['cardboard', 'import', 'x.csv', '--dry'], configDir)).toEqual(['--dry-run']);
  });

  it('completes board aliases from the config and field names from the cached schema', async () => {
    const configDir = tempDir();
    mkdirSync(configDir, { recursive: true });
    writeFileSync(
      join(configDir, 'config.json'),
      JSON.stringify({
        defaultBoard: 'work',
        boards: {
          work: { id: 'b1', baseUrl: 'http://127.0.0.1:9', token: 'secret-token-1' },
          home: { id: 'b2', baseUrl: 'http://127.0.0.1:9', token: 'secret-token-2' },
        },
      }),
      { mode: 0o600 },
    );
    const { schemaCachePath } = await import('../../src/config/index.js');
    const cache = schemaCachePath(childEnv({ configDir }), 'http://127.0.0.1:9', 'b1');
    mkdirSync(join(cache, '..'), { recursive: true });
    writeFileSync(
      cache,
      JSON.stringify({ baseUrl: 'http://127.0.0.1:9', board: 'b1', fetchedAt: 0, fields: [{ name: 'Status', uuid: 'u1' }, { name: 'Due Date', uuid: 'u2' }] }),
    );
    const aliases = await runMain(['completion', '--list', 'aliases'], { configDir });
    expect(aliases.stdout.split('\n').filter(Boolean).sort()).toEqual(['home', 'work']);
    expect(aliases.stdout).not.toContain('secret-token');

    const script = (await runMain(['completion', 'bash'], { configDir })).stdout;
    expect(complete(script, ['cardboard', 'schema', '--board', ''], configDir).sort()).toEqual(['home', 'work']);
    // The verbs whose argument is a stored alias offer the aliases, not file names.
    expect(complete(script, ['cardboard', 'board', 'use', ''], configDir).sort()).toEqual(['home', 'work']);
    expect(complete(script, ['cardboard', 'board', 'remove', 'w'], configDir)).toEqual(['work']);
    expect(complete(script, ['cardboard', 'board', 'set-signing-key', 'h'], configDir)).toEqual(['home']);
    expect(complete(script, ['cardboard', 'board', 'use', 'x'], configDir)).toEqual([]);
    // A verb typed by its alias completes as its name does; the alias itself is not offered among the verbs.
    expect(complete(script, ['cardboard', 'board', 'rm', 'w'], configDir)).toEqual(['work']);
    expect(complete(script, ['cardboard', 'board', 'ls', '--j'], configDir)).toEqual(['--json']);
    expect(complete(script, ['cardboard', 'board', 'r'], configDir)).toEqual(['remove']);
    expect(complete(script, ['cardboard', 'card', 'put', 'St'], configDir)).toEqual(['Status=']);
    expect(complete(script, ['cardboard', 'import', 'x.csv', '--match-on', 'D'], configDir)).toEqual(['Due\\ Date']);
  });

  it('prints zsh and fish scripts, and rejects an unknown shell with exit 2', async () => {
    const zsh = await runMain(['completion', 'zsh']);
    expect(zsh.code).toBe(0);
    expect(zsh.stdout).toMatch(/^#compdef cardboard/);
    const fish = await runMain(['completion', 'fish']);
    expect(fish.code).toBe(0);
    expect(fish.stdout).toContain("complete -c cardboard -n '__fish_use_subcommand' -a import");
    const bad = await runMain(['completion', 'tcsh']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Allowed choices are bash, zsh, fish');
    const none = await runMain(['completion']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('cardboard completion bash|zsh|fish');
  });
});
