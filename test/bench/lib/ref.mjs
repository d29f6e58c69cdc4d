// `--against REF`: the ref's own build of cardboard, to measure beside this tree. The ref is checked out
// detached in a git worktree under test/bench/out/ref-<sha>/ (gitignored), its dependencies installed from
// its own lockfile (they differ from this tree's) and its sources compiled with its own tsconfig. A build is
// complete once its marker file exists (written last); a directory without it is a half build, redone.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { log, OUT } from './proc.mjs';
import { UsageError } from './stats.mjs';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const MARKER = '.bench-build-complete';

/** The environment of the ref's npm and tsc: without the npm_* variables of the `npm run bench` around us. */
function cleanEnv() {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k)) env[k] = v;
  return env;
}

function git(args, opts = {}) {
  return spawnSync('git', args, { cwd: ROOT, encoding: 'utf8', ...opts });
}

/** The full sha of `ref`, or a UsageError (one line) when git knows no such commit. */
export function resolveRef(ref) {
  const r = git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]);
  if (r.error) throw new UsageError(`--against ${ref}: cannot run git (${r.error.message})`);
  const sha = r.stdout.trim();
  if (r.status !== 0 || !/^[0-9a-f]{40}$/.test(sha)) throw new UsageError(`--against ${ref}: git knows no commit by that name`);
  return sha;
}

/** Run a build step in the ref's worktree, its output on our stderr; throws with the step's name if it fails. */
function step(what, cmd, args, cwd) {
  log(`ref: ${what}`);
  const r = spawnSync(cmd, args, { cwd, env: cleanEnv(), stdio: ['ignore', 2, 2] });
  if (r.error || r.status !== 0) throw new Error(`building the ref: \`${cmd} ${args.join(' ')}\` in ${cwd} failed (${r.error?.message ?? `exit ${r.status}`})`);
}

/**
 * The directory of `sha`'s build (test/bench/out/ref-<sha>/, its CLI at bin/cardboard.js): reused when a
 * complete build is there, else (re)built.
 */
export function buildRef(sha) {
  const dir = join(OUT, `ref-${sha}`);
  const marker = join(dir, MARKER);
  if (existsSync(marker) && readFileSync(marker, 'utf8').trim() === sha) {
    log(`ref: reusing the build of ${sha.slice(0, 7)} in ${dir}`);
    return dir;
  }
  if (existsSync(dir)) {
    log(`ref: ${dir} holds an unfinished build; removing it`);
    git(['worktree', 'remove', '--force', dir]);
    rmSync(dir, { recursive: true, force: true });
  }
  git(['worktree', 'prune']);
  step(`git worktree add --detach ${dir} ${sha.slice(0, 7)}`, 'git', ['worktree', 'add', '--detach', dir, sha], ROOT);
  step('npm ci --no-audit --no-fund --ignore-scripts (the ref\'s own lockfile)', 'npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], dir);
  step('npx tsc -p tsconfig.json', 'npx', ['tsc', '-p', 'tsconfig.json'], dir);
  if (!existsSync(join(dir, 'bin', 'cardboard.js'))) throw new Error(`building the ref: ${dir}/bin/cardboard.js is missing`);
  writeFileSync(marker, `${sha}\n`);
  log(`ref: built ${sha.slice(0, 7)}`);
  return dir;
}

/** The ref as a client of the scenarios: { label, short, bin }. */
export function refClient(sha, dir) {
  const short = sha.slice(0, 7);
  return { label: `ref ${short}`, short, bin: join(dir, 'bin', 'cardboard.js'), isRef: true };
}
