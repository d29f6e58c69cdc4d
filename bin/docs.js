#!/usr/bin/env node
// `npm run docs`: writes the command reference (docs/commands/*.md, docs/man/*.1) generated from the built
// command tree by dist/docs/reference.js, deletes the pages of commands that no longer exist, and lists the
// man pages in package.json's "man" (what `npm install -g` links into the man path).
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createContext } from '../dist/context.js';
import { manPages, referenceFiles } from '../dist/docs/reference.js';
import { buildProgram } from '../dist/program.js';
import { VERSION } from '../dist/version.js';

const root = fileURLToPath(new URL('..', import.meta.url));
// An empty environment: nothing of the caller's (a board, a token, a terminal width) reaches the pages.
const ctx = createContext({ env: {} });
const files = referenceFiles(await buildProgram(ctx, [], () => ctx, true), VERSION);

for (const dir of ['docs/commands', 'docs/man']) {
  mkdirSync(join(root, dir), { recursive: true });
  for (const name of readdirSync(join(root, dir))) {
    if (!files.has(`${dir}/${name}`)) rmSync(join(root, dir, name));
  }
}
for (const [path, text] of files) {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}
const pkgPath = join(root, 'package.json');
const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
pkg.man = manPages(files);
writeFileSync(pkgPath, `${JSON.stringify(pkg, null, 2)}\n`);
process.stderr.write(`wrote ${files.size} files under docs/commands and docs/man\n`);
