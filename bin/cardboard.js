#!/usr/bin/env node
// The installed entry point: makes the process-wide V8 settings (src/tuning.ts), runs the compiled CLI,
// then exits with its code once stdout has drained, so that an idle keep-alive socket cannot hold the
// process open; a run stopped by SIGINT or SIGTERM ends by that signal instead (src/interrupt.ts).
import module from 'node:module';

const argv = process.argv.slice(2);
// The one look at argv before commander loads: a version flag alone (VERSION_FLAGS, which the root's
// --version option is made of) needs neither commander (slow to load) nor any command module. Anything
// else, `-qV` included, is read by the tree (src/program.ts scanArgv, then commander).
const { VERSION, VERSION_FLAGS } = await import('../dist/version.js');
if (argv.length === 1 && VERSION_FLAGS.includes(argv[0])) {
  // `cardboard --version | true`: a reader that went away ends it quietly, as in every command (main.ts).
  const { watchBrokenPipe } = await import('../dist/io/write.js');
  watchBrokenPipe(process.stdout, () => {});
  process.stdout.write(`${VERSION}\n`);
} else {
  // Before the rest of the CLI loads: on Node >= 22.8 modules compiled once are reused
  // (src/compile-cache.ts). Node 20 has no such cache, and does not load the module that would turn it on.
  if (typeof module.enableCompileCache === 'function') await (await import('../dist/compile-cache.js')).enableCompileCache(process.env);
  const [{ runToEnd }, { scanArgv }, { exitBySignal }] = await Promise.all([import('../dist/main.js'), import('../dist/program.js'), import('../dist/interrupt.js')]);
  // Before any command code runs: the flags must be set before undici compiles its WebAssembly parser.
  const { noun: command, help } = scanArgv(argv);
  // Help and a bare `cardboard` send nothing and are never tuned (planTuning): they do not load the module.
  if (command !== undefined && !help) {
    const { planTuning, applyTuning } = await import('../dist/tuning.js');
    await applyTuning(planTuning({ v8: process.versions.v8, execArgv: process.execArgv, env: process.env, command, help }));
  }
  const { code, signal } = await runToEnd(argv);
  process.stdout.write('', () => (signal ? exitBySignal(signal) : process.exit(code)));
}
