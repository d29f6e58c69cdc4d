import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/bench/**', 'node_modules/**'],
    pool: 'forks',
    // Vitest's default is one worker per core but one; most files here wait on sockets and child
    // processes, so three workers keep two cores busy (measured on 2 cores: 1 worker 106 s, 3 workers 58 s).
    maxWorkers: 3,
    // Files share a worker's module cache (3 workers: 58 -> 45 s). Safe because src/ keeps no module
    // state but the locks the process holds, empty once each is released (test/architecture/state.test.ts
    // fails on any other), and test helpers register per-test cleanup with onTestFinished rather than
    // module-level hooks; a shuffled run (--sequence.shuffle) passes too.
    isolate: false,
    // Timeouts catch hangs, not slowness: on a loaded machine (load 10 on 2 cores, or two copies of the suite
    // at once) a test runs 5-10x slower than on a quiet one. A child process a test starts is killed after
    // CHILD_KILL_MS (test/helpers/cli.ts), under these, so the test itself says what hung.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
