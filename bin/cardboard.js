#!/usr/bin/env node
// The installed entry point: runs the compiled CLI, then exits with its code once stdout has drained,
// so that an idle keep-alive socket cannot hold the process open.
import { main } from '../dist/main.js';

const code = await main(process.argv.slice(2));
process.stdout.write('', () => process.exit(code));
