// The layering of src/ that docs/architecture.md describes ("The layers"), checked on the imports as written:
// every `import`, `import type`, `export … from` and `import()` of every file, type-only ones included (a
// type import is still a dependency: the module it names must compile first, and a circle of types is a
// circle of design). The imports are read by TypeScript's own scanner (ts.preProcessFile, from the
// typescript devDependency already here) rather than by a dependency checker such as dependency-cruiser,
// a new package and its dependencies for these few rules. The layer table is read from
// docs/architecture.md itself, so the page and this test cannot say different things.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');

/** Every TypeScript file of src/, as a path relative to src/ (`io/text.ts`). */
function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') ? [relative(SRC, path)] : [];
  });
}

/** The modules of src/ that `file` imports in any way (relative specifiers; `.js` names its `.ts`), each once. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(SRC, file), 'utf8'), true, true);
  const found = new Set<string>();
  for (const { fileName } of importedFiles) {
    if (!fileName.startsWith('.')) continue; // a package or node: builtin
    found.add(relative(SRC, resolve(SRC, dirname(file), fileName)).replace(/\.js$/, '.ts'));
  }
  return [...found];
}

/** The import graph of src/: module → the modules it imports. */
function importGraph(): Map<string, string[]> {
  return new Map(sourceFiles().map((f) => [f, importsOf(f)]));
}

/** Each cycle of the graph, as one path that returns to its start (`a.ts → b.ts → a.ts`); none when there is none. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (m: string) => {
    state.set(m, 'open');
    path.push(m);
    for (const next of graph.get(m) ?? []) {
      if (state.get(next) === 'open') found.push([...path.slice(path.indexOf(next)), next].join(' → '));
      else if (!state.has(next) && graph.has(next)) visit(next);
    }
    path.pop();
    state.set(m, 'done');
  };
  for (const m of [...graph.keys()].sort()) if (!state.has(m)) visit(m);
  return found;
}

/** A row of the layer table: its name and the src/ paths it names (a folder ends with `/`). */
interface Layer {
  name: string;
  paths: string[];
}

/** The rows of the table under "## The layers" in docs/architecture.md, top layer first; paths relative to src/. */
function documentedLayers(page = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8')): Layer[] {
  const section = /^## The layers\n([\s\S]*?)(?=^## )/m.exec(page)?.[1] ?? '';
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !/^\|\s*(layer\s*\||-)/.test(line))
    .map((line) => {
      const [name = '', modules = ''] = line.split('|').slice(1).map((cell) => cell.trim());
      return { name, paths: [...modules.matchAll(/`src\/([^`]+)`/g)].map((m) => m[1]!) };
    });
}

/** The index of the layer `file` belongs to (the row naming it or its folder), or -1. */
function layerIndex(layers: readonly Layer[], file: string): number {
  return layers.findIndex((l) => l.paths.some((p) => (p.endsWith('/') ? file.startsWith(p) : file === p)));
}

/** The imports that break the table: a module importing one of a layer above its own, or a module in no layer. */
function layerBreaks(graph: ReadonlyMap<string, readonly string[]>, layers: readonly Layer[]): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph) {
    const own = layerIndex(layers, from);
    if (own < 0) {
      out.push(`src/${from} is in no layer of the table`);
      continue;
    }
    for (const to of targets) {
      const theirs = layerIndex(layers, to);
      if (theirs >= 0 && theirs < own) out.push(`src/${from} (${layers[own]!.name}) imports src/${to} (${layers[theirs]!.name}, above it)`);
    }
  }
  return out;
}

/** Imports of `target` (a file, or a folder ending in `/`) from modules outside `allowed` (files or folders). */
function importsFromOutside(graph: ReadonlyMap<string, readonly string[]>, target: string, allowed: readonly string[]): string[] {
  const within = (m: string, paths: readonly string[]) => paths.some((p) => (p.endsWith('/') ? m.startsWith(p) : m === p));
  const out: string[] = [];
  for (const [from, targets] of graph) {
    if (within(from, allowed)) continue;
    for (const to of targets) if (within(to, [target])) out.push(`src/${from} imports src/${to}`);
  }
  return out;
}

describe('the layers of src/ (docs/architecture.md, "The layers")', () => {
  const graph = importGraph();
  const layers = documentedLayers();

  it('reads the imports of every module, type-only and dynamic ones included', () => {
    // The scanner sees each kind: io/streams.ts is imported only for types, and api/session.ts only by import().
    expect(graph.get('host.ts')).toContain('io/streams.ts');
    expect(graph.get('context.ts')).toContain('api/session.ts');
    expect(layers.map((l) => l.name)).toContain('I/O');
  });

  it('has no import cycle', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('imports src/commands/ only from src/commands/, src/program.ts, src/main.ts and src/docs/', () => {
    expect(importsFromOutside(graph, 'commands/', ['commands/', 'program.ts', 'main.ts', 'docs/'])).toEqual([]);
  });

  it('src/io/ and src/http/ import neither the context nor the run (context.ts, host.ts, main.ts, program.ts)', () => {
    const io = [...graph].filter(([from]) => from.startsWith('io/') || from.startsWith('http/'));
    const above = ['context.ts', 'host.ts', 'main.ts', 'program.ts'];
    expect(io.flatMap(([from, targets]) => targets.filter((t) => above.includes(t)).map((t) => `src/${from} imports src/${t}`))).toEqual([]);
  });

  it('every module is in a layer of the table, and imports only its own layer and those below it', () => {
    expect(layerBreaks(graph, layers)).toEqual([]);
  });
});
