// A PostgreSQL server for the scenarios that measure the mirror on PostgreSQL: the one CARDBOARD_TEST_PG names
// (the directory of its Unix socket, where the role `postgres` connects without a password), else a private
// cluster of its own made with Debian's binaries (/usr/lib/postgresql/<version>/bin) in a temporary directory,
// on a Unix socket only (no TCP port), stopped and removed at the end. The server refuses to run as root, so as
// root the cluster belongs to the `postgres` user and its commands run through `runuser -u postgres`.
// Either way the scenario gets a fresh schema, dropped at the end: the server may be shared with the tests.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { log } from './proc.mjs';

const ROLE = 'postgres';

/** The newest Debian PostgreSQL bin directory, or undefined. */
function debianBin() {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(root, versions[0], 'bin') : undefined;
}

/** The uid and gid of a system user (from /etc/passwd), or undefined. */
function userIds(name) {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  if (!line) return undefined;
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/** Start a private cluster in a new temporary directory: { socket, stop() }; throws with the reason it cannot. */
function privateCluster(bin) {
  const root = process.getuid?.() === 0;
  const ids = root ? userIds(ROLE) : undefined;
  if (root && !ids) throw new Error(`running as root and there is no \`${ROLE}\` user to run the server as`);
  const dir = mkdtempSync(join(tmpdir(), 'cardboard-bench-pg-'));
  if (ids) chownSync(dir, ids.uid, ids.gid);
  const as = (cmd, args) => (root ? ['runuser', ['-u', ROLE, '--', join(bin, cmd), ...args]] : [join(bin, cmd), args]);
  const run = (cmd, args) => {
    const [file, argv] = as(cmd, args);
    execFileSync(file, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
  };
  const data = join(dir, 'data');
  try {
    // The superuser is named `postgres` whoever runs initdb, so the URL is the same as with CARDBOARD_TEST_PG.
    run('initdb', ['-D', data, '-A', 'trust', '-U', ROLE, '--no-sync']);
    run('pg_ctl', ['-D', data, '-o', `-k ${dir} -c listen_addresses=''`, '-l', join(dir, 'log'), '-w', 'start']);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`could not start a private PostgreSQL cluster with ${bin}: ${String(err.stderr ?? err.message).trim().split('\n')[0]}`, { cause: err });
  }
  return {
    socket: dir,
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** The pid of the server's postmaster and of its children (the backends): their CPU is the server's. */
function serverPids(socket) {
  const pidFile = join(socket, 'data', 'postmaster.pid');
  const postmaster = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : undefined;
  if (!postmaster) return [];
  const pids = [postmaster];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) pids.push(Number(entry));
    } catch {
      // the process ended between the listing and the read
    }
  }
  return pids;
}

/**
 * A PostgreSQL server and a fresh schema in it: { url (CARDBOARD_MIRROR), socket, schema, cpuMicros() (the
 * server's CPU so far, when it is our own cluster; undefined for a server given), close() }; or { skipped:
 * reason } when there is none here.
 */
export async function startPostgres() {
  let cluster;
  let socket = process.env.CARDBOARD_TEST_PG || undefined;
  if (socket === undefined) {
    const bin = debianBin();
    if (!bin) return { skipped: 'no PostgreSQL server: set CARDBOARD_TEST_PG to the socket directory of one, or apt-get install postgresql' };
    try {
      log(`starting a private PostgreSQL cluster (${bin})`);
      cluster = privateCluster(bin);
    } catch (err) {
      return { skipped: err.message };
    }
    socket = cluster.socket;
  }
  const { default: pg } = await import('pg');
  const schema = `bench_${process.pid}_${Date.now().toString(36)}`;
  const admin = () => new pg.Client({ host: socket, user: ROLE, database: 'postgres' });
  try {
    const c = admin();
    await c.connect();
    try {
      await c.query(`CREATE SCHEMA ${schema}`);
    } finally {
      await c.end();
    }
  } catch (err) {
    cluster?.stop();
    return { skipped: `the PostgreSQL server at ${socket} refused the bench: ${err.message}` };
  }
  const version = await (async () => {
    const c = admin();
    await c.connect();
    try {
      return (await c.query('SHOW server_version')).rows[0].server_version;
    } finally {
      await c.end();
    }
  })();
  const url = `postgres://${ROLE}@/postgres?host=${encodeURIComponent(socket)}&options=${encodeURIComponent(`-csearch_path=${schema}`)}`;
  return {
    url,
    socket,
    schema,
    version,
    own: cluster !== undefined,
    /** CPU time (µs, user + system) of the server's processes so far; undefined for a server we did not start. */
    cpuMicros: () => {
      if (!cluster) return undefined;
      let total = 0;
      for (const pid of serverPids(socket)) {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          total += ((Number(f[11]) + Number(f[12])) * 1e6) / 100;
        } catch {
          // gone
        }
      }
      return total;
    },
    async close() {
      try {
        const c = admin();
        await c.connect();
        try {
          await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        } finally {
          await c.end();
        }
      } finally {
        cluster?.stop();
      }
    },
  };
}
