// The thread of a mirror on PostgreSQL (started by store.ts through bridge.ts): it connects with the run's
// environment as its own (PGPASSWORD and the like), opens the board's mirror as a store (ops.ts) or for
// `cardboard query` (reader-ops.ts), and runs each call of the store's thread on them, one at a time.
import { type Handlers, serveSync } from './bridge.js';
import { connectTo, lostConnection } from './location.js';
import { openPgStore } from './ops.js';
import { openPgReader } from './reader-ops.js';
import type { PgWorkerJob } from './store.js';

serveSync(async (data) => {
  const job = data as PgWorkerJob;
  const { target, board, create } = job.open;
  const connect = () => connectTo(target);
  const ops = job.kind === 'reader' ? await openPgReader(connect, board, target.location) : await openPgStore(connect, board, target.location, create);
  // A connection the server or the network ended is said as such, naming the location; any other error as it is.
  const calls = Object.entries(ops as unknown as Handlers).map(([name, fn]) => [
    name,
    async (...args: never[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        throw lostConnection(err, target);
      }
    },
  ]);
  return Object.fromEntries(calls) as Handlers;
});
