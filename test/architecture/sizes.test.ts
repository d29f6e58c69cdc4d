// The shape docs/architecture.md gives a command: flags → plain options → a run function, with the work done
// by the engines below. Checked as sizes, read from the source with TypeScript's parser: a file of
// src/commands/ over MAX_FILE_LINES lines, or a verb's run function (`run…`/`execute…`) over MAX_RUN_LINES,
// is engine code that grew in the command folder.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const COMMANDS = join(ROOT, 'src/commands');
const MAX_FILE_LINES = 200;
const MAX_RUN_LINES = 80;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return files(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every function of `text` named `run…` or `execute…` (a declaration, or an arrow or function bound to a const), with its length in lines. */
export function runFunctions(text: string, name = 'file.ts'): { name: string; lines: number }[] {
  const source = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
  const found: { name: string; lines: number }[] = [];
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
  const visit = (node: ts.Node) => {
    let fnName: string | undefined;
    if (ts.isFunctionDeclaration(node) && node.body) fnName = node.name?.text;
    else if (ts.isVariableDeclaration(node) && node.initializer && (ts.isArrowFunction(node.initializer) || ts.isFunctionExpression(node.initializer))) fnName = node.name.getText(source);
    if (fnName !== undefined && /^(run|execute)[A-Z]/.test(fnName)) found.push({ name: fnName, lines: lineOf(node.getEnd()) - lineOf(node.getStart(source)) + 1 });
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the size of a command', () => {
  it(`no file under src/commands/ is over ${MAX_FILE_LINES} lines`, () => {
    const long = files(COMMANDS)
      .map((f) => ({ file: relative(ROOT, f), lines: readFileSync(f, 'utf8').split('\n').length }))
      .filter((f) => f.lines > MAX_FILE_LINES)
      .map((f) => `${f.file}: ${f.lines} lines`);
    expect(long).toEqual([]);
  });

  it(`no verb's run function is over ${MAX_RUN_LINES} lines`, () => {
    const long = files(COMMANDS).flatMap((f) =>
      runFunctions(readFileSync(f, 'utf8'), f)
        .filter((fn) => fn.lines > MAX_RUN_LINES)
        .map((fn) => `${relative(ROOT, f)}: ${fn.name} is ${fn.lines} lines`),
    );
    expect(long).toEqual([]);
  });

  it('finds run functions however they are written, and measures them whole', () => {
    const text = ['export async function runA() {', '  1;', '}', 'const executeB = async () => {', '};', 'function helper() {}', ''].join('\n');
    expect(runFunctions(text)).toEqual([
      { name: 'runA', lines: 3 },
      { name: 'executeB', lines: 2 },
    ]);
  });

  it('the commands have run functions to measure (the check is not vacuous)', () => {
    const names = files(COMMANDS).flatMap((f) => runFunctions(readFileSync(f, 'utf8'), f).map((fn) => fn.name));
    expect(names).toEqual(expect.arrayContaining(['runWebhookListen', 'runWebhookReplay', 'executeImport']));
  });
});
