import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv } from '../helpers/cli.js';
import { BOARD_ID, FIELDS, type RunningEmulator, startTestEmulator, TOKEN } from '../helpers/emulator.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
/** The only fixtures a user gets: the demo's, which the README and help examples use. */
const DEMO_FIXTURES = ['fixtures/demo-boards.json', 'fixtures/demo-cards.csv'];

interface PackedFile {
  path: string;
}

// The package installs from its tarball into a clean global prefix and works.
describe('npm pack → npm install -g --prefix → cardboard', () => {
  let dir: string;
  let prefix: string;
  let files: string[];
  let emulator: RunningEmulator;
  const bin = () => join(prefix, 'bin', 'cardboard');

  beforeAll(async () => {
    // The tarball ships dist/ as built: the test suite runs after `npm run build` (npm test builds first).
    expect(existsSync(join(ROOT, 'dist', 'main.js'))).toBe(true);
    dir = mkdtempSync(join(tmpdir(), 'cardboard-pack-'));
    prefix = join(dir, 'prefix');
    // --ignore-scripts: `prepare` would rebuild dist/ while other tests may be reading it.
    const packed = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: ROOT, maxBuffer: 16 << 20 });
    const [info] = JSON.parse(packed.stdout) as [{ filename: string; files: PackedFile[] }];
    files = info.files.map((f) => f.path);
    const tarball = join(dir, info.filename);
    // Dependencies come from the local npm cache; no registry is needed when they are cached.
    await run('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball], { cwd: dir, maxBuffer: 16 << 20 });
    emulator = await startTestEmulator();
  }, 120_000);

  afterAll(async () => {
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('packs the entry point, the build and the demo fixtures, and no tests or sources', () => {
    expect(files).toContain('package.json');
    expect(files).toContain('bin/cardboard.js');
    expect(files).toContain('dist/main.js');
    expect(files.filter((f) => f.startsWith('test/') || f.startsWith('src/'))).toEqual([]);
    expect(files.filter((f) => f.startsWith('fixtures/')).sort()).toEqual(DEMO_FIXTURES);
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    // The licence; the man pages (package.json's man list installs them) and the guides, which the help
    // names (docs/boards-and-credentials.md); not the Markdown copy of the reference, which the man pages are.
    expect(files).toContain('LICENSE');
    expect(files).toContain('docs/man/cardboard-import.1');
    expect(files).toContain('docs/boards-and-credentials.md');
    expect(files.filter((f) => f.startsWith('docs/commands/'))).toEqual([]);
  });

  it('installs a working `cardboard --version`', async () => {
    const r = await run(bin(), ['--version'], { env: childEnv({ configDir: join(dir, 'config') }) });
    expect(r.stdout.trim()).toBe(pkg.version);
    // A copy of the tarball, not a link to this checkout: no sources or tests came along.
    const installed = join(prefix, 'lib', 'node_modules', pkg.name);
    expect(existsSync(join(installed, 'dist', 'main.js'))).toBe(true);
    expect(existsSync(join(installed, 'src'))).toBe(false);
    expect(existsSync(join(installed, 'test'))).toBe(false);
    // A global install links the man pages where man finds them.
    expect(existsSync(join(prefix, 'share', 'man', 'man1', 'cardboard-card-put.1'))).toBe(true);
  });

  it('runs `cardboard schema --json` against the emulator with CARDBOARD_* from the environment', async () => {
    const env = childEnv({
      configDir: join(dir, 'config'),
      env: { CARDBOARD_BASE_URL: emulator.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN },
    });
    const r = await run(bin(), ['schema', '--json'], { env });
    const fields = JSON.parse(r.stdout) as Array<{ name: string }>;
    expect(fields.map((f) => f.name)).toEqual(FIELDS);
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
    const seen = emulator.requests().filter((q) => q.path.includes('/schema'));
    expect(seen.length).toBeGreaterThan(0);
  });
});
