// The top level of the repository holds only what a reader expects there: the code's folders, the package
// and compiler files, the four documents, CI and tool config. Anything else belongs in one of the folders.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const FOLDERS = ['src', 'bin', 'test', 'fixtures', 'docs', '.ci'];
const DOCUMENTS = ['README.md', 'LICENSE', 'CHANGELOG.md', 'CONTRIBUTING.md'];
const PACKAGE = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.src.json', 'tsconfig.test.json'];
const TOOL_CONFIG = ['.gitignore', 'eslint.config.js', 'vitest.config.ts'];

/** The first path segment of every file git tracks (and of every new file not ignored). */
function topLevel(): Set<string> {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: ROOT, encoding: 'utf8' });
  return new Set(files.split('\0').filter(Boolean).map((path) => path.split('/')[0]!));
}

describe('the top level of the repository', () => {
  it('holds only the folders, documents, package files and tool config it is meant to', () => {
    const allowed = new Set([...FOLDERS, ...DOCUMENTS, ...PACKAGE, ...TOOL_CONFIG]);
    expect([...topLevel()].filter((name) => !allowed.has(name)).sort()).toEqual([]);
  });

  it('has the README, the licence, the changelog and the contributing guide', () => {
    const top = topLevel();
    for (const name of DOCUMENTS) expect(top.has(name), name).toBe(true);
  });
});
