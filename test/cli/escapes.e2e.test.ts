// Escapes end to end: the built binary against a server whose names, values and ids carry
// `ESC]0;pwned BEL`, `ESC[1A ESC[2K`, U+202E, CR, LF and a C1 CSI. On a real pseudo-terminal nothing of
// it reaches the screen raw; piped machine output keeps it exact; errors quoting it stay escaped.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';
import { HOSTILE, type HostileServer, hostileEnv, RAW_CONTROL, startHostileServer } from '../helpers/hostile-server.js';
import { runOnPty } from '../helpers/pty.js';

/** Run the built CLI on a pseudo-terminal; the screen bytes as text and the exit code. */
function onTerminal(args: string[], env: Record<string, string>): Promise<{ code: number | null; screen: string }> {
  return runOnPty(args, { CI: '1', NO_COLOR: '1', ...env });
}

/** What the terminal would act on. The pty turns each LF into CR LF, so only a CR not before LF counts. */
function rawControls(screen: string): string[] {
  return [...screen.matchAll(/\r(?!\n)|[\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029]|(?!\u200d)\p{Cf}/gu)].map((m) => m[0]);
}

let server: HostileServer;
let env: Record<string, string>;

beforeAll(async () => {
  server = await startHostileServer({ mode: 'escapes' });
  env = { ...hostileEnv(server), CARDBOARD_CONFIG_DIR: tempDir() };
});
afterAll(async () => {
  await server.close();
});

describe('on a terminal nothing from the server is raw', () => {
  it('schema, card list, card put and comment', async () => {
    for (const args of [['schema', '--refresh'], ['card', 'list'], ['card', 'put', 'Title=x', '--id', 'mine'], ['comment', 'c1', 'hello']]) {
      const { code, screen } = await onTerminal(args, env);
      // card put --id: the hostile server answers with another id, a new card instead of the update (exit 5).
      expect(code, `${args.join(' ')}:\n${screen}`).toBe(args[1] === 'put' ? 5 : 0);
      expect(rawControls(screen), `${args.join(' ')}:\n${screen}`).toEqual([]);
      if (args[0] === 'schema') expect(screen).toMatch(/\nTitle\\e\]0;pwned\\a {2}/);
      if (args[0] === 'card' && args[1] === 'list') expect(screen).toMatch(/\nid\\e\]0;pwned\\a {2}/);
      if (args[1] === 'put') {
        expect(screen).toContain('warning: the board created a new card (new\\e]0;pwned\\aevil\\u202etxt.exe) instead of updating mine');
        // The card first (stdout), then the warning that ends the run with exit 5.
        expect(screen.startsWith('new\\e]0;pwned\\aevil\\u202etxt.exe\r\n')).toBe(true);
      }
      if (args[0] === 'comment') expect(screen).toBe('c\\e[1A\\e[2K\r\n');
    }
  });
});

describe('piped, machine output stays exact', () => {
  it('card list --format json and the id card put prints', async () => {
    const list = await runCli(['card', 'list', '--format', 'json'], { env, configDir: env.CARDBOARD_CONFIG_DIR });
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)[0]).toEqual({ _id: `id${HOSTILE.retitle}`, Title: HOSTILE.erase, [HOSTILE.rtl]: HOSTILE.rtl, [HOSTILE.lf]: HOSTILE.cr });
    const put = await runCli(['card', 'put', 'Title=x'], { env, configDir: env.CARDBOARD_CONFIG_DIR });
    expect(put.stdout).toBe(`new${HOSTILE.retitle}${HOSTILE.rtl}\n`);
  });
});

describe('errors quoting hostile field names', () => {
  it('a did-you-mean and a suggested --map are escaped, each on its own line', async () => {
    const put = await runCli(['card', 'put', 'eviltxt.exe=x', 'onetwo=y'], { env, configDir: env.CARDBOARD_CONFIG_DIR });
    expect(put.code).toBe(2);
    expect(put.stderr).toMatch(/^error: unknown fields 'eviltxt\.exe' \(did you mean 'evil\\u202etxt\.exe'\?\), 'onetwo' \(did you mean 'one\\ntwo'\?\); .*\nhint: .*\nUsage: cardboard card put .*\nSee 'cardboard card put --help'\.\n$/);
    expect(put.stderr).not.toMatch(RAW_CONTROL);

    const file = join(tempDir(), 'in.csv');
    writeFileSync(file, 'Title,Statu\u0073\u001b[1A,onetwo\nx,y,z\n');
    const imp = await runCli(['import', file], { env, configDir: env.CARDBOARD_CONFIG_DIR });
    expect(imp.code).toBe(2);
    expect(imp.stderr).not.toMatch(RAW_CONTROL);
    expect(imp.stderr).toContain("add --map $'onetwo=one\\ntwo'");
    expect(imp.stderr).toContain("column 'Status\\e[1A': no field of that name; closest is 'Status\\e[1A\\e[2K'");
    // The message, one line per column, the hint, the usage line and where the help is.
    expect(imp.stderr.trimEnd().split('\n')).toHaveLength(6);
  });
});
