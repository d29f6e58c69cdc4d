import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/bench/**', 'node_modules/**'],
    // A PostgreSQL server of the run's own for the mirror's tests on PostgreSQL, when none is named
    // (CARDBOARD_TEST_PG) and Debian's postgresql is installed; stopped when the run ends.
    globalSetup: ['test/setup/postgres-server.ts'],
    // Each worker is a process of its own: the child processes, signal listeners and process-wide state a
    // file's tests touch stay with its worker.
    pool: 'forks',
    // Two workers per core: most files spend much of their time waiting on child processes, sockets, rate
    // limits and timeouts, so with one worker per core the cores would often sit idle; more workers than
    // that add CPU (each worker loads the modules its files use) for little time saved.
    maxWorkers: 2 * availableParallelism(),
    // Files share a worker's module cache: a module loads once per worker, not once per file. Safe because
    // src/ keeps no module state but the locks the process holds, empty once each is released
    // (test/architecture/state.test.ts fails on any other), and test helpers register per-test cleanup with
    // onTestFinished rather than module-level hooks; a run in shuffled file order (--sequence.shuffle.files)
    // passes too.
    isolate: false,
    // Timeouts catch hangs, not slowness: on a loaded machine, or with two copies of the suite at once, a test
    // runs several times slower than on a quiet one. A child process a test starts is killed after
    // CHILD_KILL_MS (test/helpers/cli.ts), under these, so the test itself says what hung.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
