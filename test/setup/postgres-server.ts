// Vitest's global setup: a PostgreSQL server of this run's own for the tests of the mirror on PostgreSQL, when
// none is named (CARDBOARD_TEST_PG) and Debian's `postgresql` package is installed. A fresh cluster in a
// temporary directory, reached only by a Unix socket there (no TCP port), so two runs of the suite at once
// each have their own. The server refuses to run as root: as root its files belong to the `postgres` user and
// it runs as that user. The directory's path goes to the test workers in CARDBOARD_TEST_PG (they are forked
// after this runs, with this process's environment), which test/helpers/postgres.ts reads.
//
// The server runs under a small shell that reads its standard input, a pipe from this process: when the pipe
// closes (the teardown, or this process ending in any way, killed included) the shell stops the server and
// removes its directory, so no server outlives the run.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const LIB = '/usr/lib/postgresql';

/** The bin directory of the newest PostgreSQL Debian installed (the one holding initdb), if any. */
export function debianPostgresBin(): string | undefined {
  if (!existsSync(LIB)) return undefined;
  const versions = readdirSync(LIB)
    .filter((v) => existsSync(join(LIB, v, 'bin', 'initdb')))
    .sort((a, b) => Number(a) - Number(b));
  const newest = versions.at(-1);
  return newest === undefined ? undefined : join(LIB, newest, 'bin');
}

// Runs the server in the background, stops it (a fast shutdown) once standard input ends, waits for it and
// removes its directory. No fsync: the cluster is thrown away at the end, and durability against a machine
// crash is not what the tests can check.
const WATCH = `"$1" -D "$2/data" -k "$2" -c listen_addresses= -c max_connections=200 -c fsync=off >"$2/log" 2>&1 &
pid=$!
cat >/dev/null
kill -INT "$pid" 2>/dev/null
wait "$pid"
rm -rf "$2"`;

/** A cluster of our own: started, and the function that stops it and removes its directory. */
export async function startPrivateServer(bin: string): Promise<{ socketDir: string; stop: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'cardboard-pg-'));
  const root = process.getuid?.() === 0;
  // As root, every command runs as `postgres`; otherwise as the current user, with `postgres` as the role name.
  const as = (cmd: string, args: string[]): [string, string[]] => (root ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]);
  let watcher: ChildProcess | undefined;
  const stop = async (): Promise<void> => {
    if (watcher !== undefined && watcher.exitCode === null && watcher.signalCode === null) {
      const ended = new Promise((resolve) => watcher!.once('close', resolve));
      watcher.stdin!.end();
      await ended;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    if (root) {
      const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
      const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
      chownSync(dir, uid, gid);
    }
    const [initCmd, initArgs] = as(join(bin, 'initdb'), ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']);
    const init = spawnSync(initCmd, initArgs, { encoding: 'utf8' });
    if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.error?.message}`);
    const [cmd, args] = as('sh', ['-c', WATCH, 'sh', join(bin, 'postgres'), dir]);
    watcher = spawn(cmd, args, { stdio: ['pipe', 'ignore', 'ignore'] });
    await ready(dir, watcher);
    return { socketDir: dir, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Wait until the server at `dir` answers (up to 60 s), or fail with its log. */
async function ready(dir: string, watcher: ChildProcess): Promise<void> {
  for (let tries = 0; tries < 600; tries++) {
    if (watcher.exitCode !== null) break;
    const client = new pg.Client({ host: dir, user: 'postgres', database: 'postgres' });
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const log = existsSync(join(dir, 'log')) ? readFileSync(join(dir, 'log'), 'utf8') : '';
  throw new Error(`the test PostgreSQL server did not start:\n${log}`);
}

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  if (process.env.CARDBOARD_TEST_PG) return undefined;
  const bin = debianPostgresBin();
  if (bin === undefined) return undefined;
  const server = await startPrivateServer(bin);
  process.env.CARDBOARD_TEST_PG = server.socketDir;
  return async () => {
    delete process.env.CARDBOARD_TEST_PG;
    await server.stop();
  };
}
