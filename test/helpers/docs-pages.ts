// The documentation pages the tests read: README.md and the guides of docs/ (the generated command reference
// in docs/commands is checked against the command tree instead, by test/docs/reference.test.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root, with a trailing slash. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** README.md, then every docs/*.md in name order: paths from the root. */
export function docPages(): string[] {
  const guides = readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).sort();
  return ['README.md', ...guides.map((name) => `docs/${name}`)];
}

/** A page's text, by its path from the root. */
export function readPage(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}
