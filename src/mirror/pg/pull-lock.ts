// The pull lock of a mirror on PostgreSQL: a session-level advisory lock of the server, keyed by the board, on
// the store's writer connection, so one `mirror pull` runs at a time however many machines pull. The server
// drops it when the session ends: at release(), at close(), and when the process dies (kill -9 included: the
// server sees the connection close). A pull refused names the holder as the server knows it: the session's
// application_name (which says the pulling process and its host), its client address and since when it is
// connected (pg_stat_activity shows the last two only to the same role or a role that may read the statistics).
import { hostname } from 'node:os';
import type pg from 'pg';
import { pullRunning } from '../pull-lock.js';

/** The first key of the pull lock ("cbpu"), not the write lock's; the second is the board's key (boardKey). */
const PULL_LOCK_SPACE = 0x63627075;

/** The start of the application_name of a session that holds a pull lock; the rest says which process. */
const PULLING = 'cardboard mirror pull: ';

/** The application_name this process's pulling session shows: the process and its host, as a file lock names them. */
export function pullHolderName(): string {
  return `${PULLING}process ${process.pid} on ${hostname()}`;
}

type HolderRow = [pid: number, name: string | null, client: string | null, since: string | null];

/** The holder of the pull lock of key `key`, as the refusal names it. */
async function holderOf(client: pg.Client, key: number): Promise<string> {
  const { rows } = await client.query<HolderRow>({
    text: `SELECT l.pid, a.application_name, host(a.client_addr), to_char(a.backend_start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
           FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
           WHERE l.locktype = 'advisory' AND l.granted AND l.classid = ${PULL_LOCK_SPACE} AND l.objid = ${key} AND l.objsubid = 2
             AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    rowMode: 'array',
  });
  const row = rows[0];
  // It ended between our try and this look: the next pull takes the lock.
  if (row === undefined) return 'a session that has just ended';
  const [pid, name, address, since] = row;
  const who = name?.startsWith(PULLING) ? name.slice(PULLING.length) : `a session named "${name ?? ''}"`;
  const seen = [`server process ${pid}`, `from ${address ?? 'a local socket'}`, ...(since === null ? [] : [`connected since ${since}`])];
  return `${who} (${seen.join(', ')})`;
}

/**
 * Take the pull lock of the board whose key is `key` (boardKey) on `client` (the store's writer), or refuse
 * with pullRunning naming the holder. The lock is tried, never waited for: a second pull is refused at once,
 * as with a file lock.
 */
export async function takePullLock(client: pg.Client, key: number, location: string): Promise<void> {
  const { rows } = await client.query<[boolean]>({
    text: `SELECT pg_try_advisory_lock(${PULL_LOCK_SPACE}, ${key}) FROM set_config('application_name', $1, false)`,
    values: [pullHolderName()],
    rowMode: 'array',
  });
  if (rows[0]![0]) return;
  throw pullRunning(await holderOf(client, key), `the advisory lock (${PULL_LOCK_SPACE}, ${key}) on the server of ${location}`);
}

/** Release the pull lock of the board whose key is `key`, held by `client`'s session. */
export async function releasePullLock(client: pg.Client, key: number): Promise<void> {
  await client.query(`SELECT pg_advisory_unlock(${PULL_LOCK_SPACE}, ${key})`);
}
