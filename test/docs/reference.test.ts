// The command reference in docs/commands and docs/man is what `npm run docs` would write now: generated
// here in memory from the same command tree and compared file by file, so a stale, missing or extra page fails.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { beforeAll, describe, expect, it } from 'vitest';
import { createContext } from '../../src/context.js';
import { manPages, pageName, referenceFiles } from '../../src/docs/reference.js';
import { buildProgram } from '../../src/program.js';
import { VERSION } from '../../src/version.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REGENERATE = 'run `npm run docs` and commit docs/commands and docs/man';

async function tree(env: NodeJS.ProcessEnv = {}): Promise<Command> {
  const ctx = createContext({ env });
  return buildProgram(ctx, [], () => ctx, true);
}

/** The files under docs/commands and docs/man as they are in the repository. */
function onDisk(): Map<string, string> {
  const files = new Map<string, string>();
  for (const dir of ['docs/commands', 'docs/man']) {
    if (!existsSync(join(ROOT, dir))) continue;
    for (const name of readdirSync(join(ROOT, dir)).sort()) files.set(`${dir}/${name}`, readFileSync(join(ROOT, dir, name), 'utf8'));
  }
  return files;
}

let generated: Map<string, string>;

beforeAll(async () => {
  generated = referenceFiles(await tree(), VERSION);
});

describe('the generated command reference', () => {
  it('has a Markdown page and a man page for every command of the tree, and an index', () => {
    const paths = [...generated.keys()];
    for (const command of [[], ['card', 'put'], ['webhook', 'listen'], ['import'], ['board', 'set-signing-key']]) {
      expect(paths).toContain(`docs/commands/${pageName(command)}.md`);
      expect(paths).toContain(`docs/man/${pageName(command)}.1`);
    }
    expect(paths).toContain('docs/commands/README.md');
    // The help verb of each group is not a command of its own.
    expect(paths.filter((p) => /-help\.(md|1)$/.test(p))).toEqual([]);
  });

  it("a page carries the command's usage, options, global options and the help's text after them", () => {
    const page = generated.get('docs/commands/cardboard-card-put.md')!;
    expect(page).toContain('cardboard card put [options] [fields...]');
    expect(page).toMatch(/^\| `--allow-unknown` \| /m);
    expect(page).toMatch(/## Global options[\s\S]*`--no-pager`/);
    expect(page).toContain(`$ cardboard card put --id "$id" Status=Done`);
    // Markup in help text stays text: `<json>` is not an HTML tag.
    expect(page).toContain('Field:=\\<json\\>');
    const man = generated.get('docs/man/cardboard-card-put.1')!;
    expect(man).toMatch(/^\.TH "CARDBOARD-CARD-PUT" "1" /m);
    expect(man).toContain('\\fB\\-\\-allow\\-unknown\\fR');
    // No line of text may start with a dot or a quote: roff would read it as a request.
    const body = man.split('\n').filter((l) => !/^\.(TH|SH|TP|nf|fi|\\")/.test(l) && l !== '');
    expect(body.filter((l) => /^[.']/.test(l))).toEqual([]);
  });

  it('depends on nothing of the environment: no board, token or terminal width reaches the pages', async () => {
    const token = 'tok-reference-secret-3141';
    const other = referenceFiles(await tree({ CARDBOARD_TOKEN: token, CARDBOARD_SIGNING_KEY: 'sk-reference-secret-2718', CARDBOARD_BOARD: 'b1', COLUMNS: '200' }), VERSION);
    expect(other).toEqual(generated);
    expect(referenceFiles(await tree(), VERSION)).toEqual(generated);
  });

  it(`is what docs/ holds (${REGENERATE} when this fails)`, () => {
    const disk = onDisk();
    const missing = [...generated.keys()].filter((p) => !disk.has(p));
    const extra = [...disk.keys()].filter((p) => !generated.has(p));
    const stale = [...generated.keys()].filter((p) => disk.has(p) && disk.get(p) !== generated.get(p));
    expect({ missing, extra, stale }, REGENERATE).toEqual({ missing: [], extra: [], stale: [] });
  });

  it(`package.json's "man" lists every man page, so a global install links them (${REGENERATE})`, () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { man?: string[] };
    expect(pkg.man).toEqual(manPages(generated));
  });
});
