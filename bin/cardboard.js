#!/usr/bin/env node
// The installed entry point: runs the compiled CLI, then exits with its code once stdout has drained,
// so that an idle keep-alive socket cannot hold the process open.
import { readFileSync } from 'node:fs';

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  // Fast path: `--version` alone needs neither commander (~20 ms to load) nor any command module.
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`${pkg.version}\n`);
} else {
  const { main } = await import('../dist/main.js');
  const code = await main(argv);
  process.stdout.write('', () => process.exit(code));
}
