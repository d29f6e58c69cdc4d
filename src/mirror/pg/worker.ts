// The thread of a mirror on PostgreSQL (started by store.ts through bridge.ts): it connects with the run's
// environment as its own (PGPASSWORD and the like), opens the board's mirror as a store (ops.ts) or for
// `cardboard query` (reader-ops.ts), and runs each call of the store's thread on them, one at a time.
import { type Handlers, serveSync } from './bridge.js';
import { connectTo, lostConnection, type MirrorAccess, refusedBy } from './location.js';
import { openPgStore } from './ops.js';
import { openPgReader } from './reader-ops.js';
import type { PgWorkerJob } from './store.js';

/** The store's calls that only read the tables; every other one writes. */
const READS = new Set(['schema', 'card', 'count', 'cardsOpen', 'cardsNext', 'cardsClose', 'pulledBy', 'unseen', 'status', 'close']);

serveSync(async (data) => {
  const job = data as PgWorkerJob;
  const { target, board, create } = job.open;
  const connect = () => connectTo(target);
  // A connection the server or the network ended, a right the server refused the role, or tables dropped
  // under the run, is said as such, naming the location; any other error as it is.
  const said = (err: unknown, access: MirrorAccess) => refusedBy(lostConnection(err, target), target, access);
  let ops: object;
  try {
    ops = job.kind === 'reader' ? await openPgReader(connect, board, target.location) : await openPgStore(connect, board, target.location, create);
  } catch (err) {
    throw said(err, job.kind === 'store' && create ? 'create' : 'read');
  }
  const calls = Object.entries(ops as Handlers).map(([name, fn]) => [
    name,
    async (...args: never[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        throw said(err, job.kind === 'reader' || READS.has(name) ? 'read' : 'write');
      }
    },
  ]);
  return Object.fromEntries(calls) as Handlers;
});
