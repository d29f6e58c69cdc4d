// `npm run build`: compile src/ into dist/ with tsc's build mode (tsconfig.src.json), which recompiles only what
// changed since the last build, as recorded in .tsbuild/src.tsbuildinfo, so a build with nothing changed takes
// a second or two instead of a full compile. tsc judges "up to date" from that record alone and does not look
// at dist/: a dist/ deleted or emptied since would stay missing. So when a source file has no compiled file in
// dist/, the build is forced to emit everything.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');
const dist = join(root, 'dist');

/** Every source file whose compiled .js is not in dist/ (all of them when dist/ is gone). */
function missingOutputs() {
  const missing = [];
  for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.d.ts')) continue;
    const file = join(entry.parentPath, entry.name);
    if (!existsSync(join(dist, relative(src, file)).replace(/\.ts$/, '.js'))) missing.push(file);
  }
  return missing;
}

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const args = [tsc, '-b', join(root, 'tsconfig.src.json')];
if (missingOutputs().length > 0) args.push('--force');
const result = spawnSync(process.execPath, [...args, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exitCode = result.status ?? 1;
