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
    // state (issue 9: state is passed, not hidden) and test helpers register per-test cleanup with
    // onTestFinished rather than module-level hooks; a shuffled run (--sequence.shuffle) passes too.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
