import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

describe('cardboard entry', () => {
  it('prints the package version', async () => {
    const r = await runCli(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
    expect(r.stderr).toBe('');
  });

  it('lists every command group in --help', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    for (const noun of ['board', 'schema', 'card', 'comment', 'import', 'webhook', 'emulator']) {
      expect(r.stdout).toMatch(new RegExp(`^\\s+${noun}\\b`, 'm'));
    }
    expect(r.stdout).toContain('Exit codes');
  });

  it('exits 2 with a suggestion on an unknown command', async () => {
    const r = await runCli(['crad']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'crad'");
    expect(r.stderr).toContain('card');
    expect(r.stdout).toBe('');
  });

  it('exits 2 on an unknown global option', async () => {
    const r = await runCli(['--nope', 'schema']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown option '--nope'");
  });
});
