// What a module of src/ may hold besides what it is passed.
//
// No module keeps state of its own: what a run needs is passed by its owner (the run's context, the object
// that uses it) or held by the object it describes. vitest.config.ts relies on this to let test files share a
// worker's module cache (isolate: false): a module that kept state would leak it from one file to the next.
// The scan is syntactic (TypeScript's parser, no type checker), so it catches the usual shapes:
//   - a top-level `let` or `var`;
//   - a top-level collection (`new Map`, `new Set`, an array or object literal), or a binding imported from
//     another module, that the file changes (`.set(`, `.push(`, `x.y = `, `x[k] = `, `delete x.y`, `++`);
//   - any other top-level `new` but of a class known to hold nothing that changes (see INERT);
//   - a global or sticky regular expression at the top level used with exec/test or lastIndex (lastIndex
//     is state);
//   - a function called as the top level is evaluated (an IIFE, the usual way to hide a cache in a closure);
//   - a static class field that is not readonly.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;

/** Methods that change the collection they are called on (Map, Set, WeakMap, WeakSet, Array). */
const MUTATORS = new Set(['set', 'add', 'delete', 'clear', 'push', 'pop', 'shift', 'unshift', 'splice', 'sort', 'reverse', 'fill', 'copyWithin']);

/** Classes whose instances keep nothing that changes once made, so one may be a module's constant. */
const INERT = new Set(['Map', 'Set', 'RegExp', 'URL', 'TextEncoder', 'TextDecoder', 'Error']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The identifier a chain such as `a.b[c].d` starts from, if it starts from one. */
function rootName(node: ts.Expression): string | undefined {
  let n: ts.Expression = node;
  while (ts.isPropertyAccessExpression(n) || ts.isElementAccessExpression(n) || ts.isParenthesizedExpression(n) || ts.isNonNullExpression(n)) n = n.expression;
  return ts.isIdentifier(n) ? n.text : undefined;
}

function isAssignment(kind: ts.SyntaxKind): boolean {
  return kind >= ts.SyntaxKind.FirstAssignment && kind <= ts.SyntaxKind.LastAssignment;
}

function isFunctionLike(node: ts.Expression): boolean {
  const n = ts.isParenthesizedExpression(node) ? node.expression : node;
  return ts.isArrowFunction(n) || ts.isFunctionExpression(n);
}

/** Everything in `text` (one module's source) that is module-level mutable state, one line each. */
function moduleState(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const at = (node: ts.Node, what: string) => found.push(`${file}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}: ${what}`);
  /** Top-level bindings whose contents must not change: collections, literals, and what is imported. */
  const watched = new Set<string>();
  /** Top-level global or sticky regular expressions. */
  const stateful = new Set<string>();
  for (const stmt of sf.statements) {
    if (ts.isImportDeclaration(stmt)) {
      const names = stmt.importClause?.namedBindings;
      if (stmt.importClause?.isTypeOnly) continue;
      if (stmt.importClause?.name) watched.add(stmt.importClause.name.text);
      if (names && ts.isNamedImports(names)) for (const spec of names.elements) if (!spec.isTypeOnly) watched.add(spec.name.text);
      if (names && ts.isNamespaceImport(names)) watched.add(names.name.text);
    } else if (ts.isVariableStatement(stmt)) {
      const isConst = (stmt.declarationList.flags & ts.NodeFlags.Const) !== 0;
      for (const decl of stmt.declarationList.declarations) {
        const name = decl.name.getText(sf);
        if (!isConst) {
          at(decl, `top-level ${stmt.declarationList.flags & ts.NodeFlags.Let ? 'let' : 'var'} ${name}`);
          continue;
        }
        let init = decl.initializer;
        while (init && (ts.isAsExpression(init) || ts.isSatisfiesExpression(init) || ts.isParenthesizedExpression(init))) init = init.expression;
        if (init === undefined) continue;
        if (ts.isNewExpression(init)) {
          const cls = init.expression.getText(sf);
          if (!INERT.has(cls)) at(decl, `top-level ${name} = new ${cls}(…)`);
          if (cls === 'RegExp' && /[gy]/.test(init.arguments?.[1]?.getText(sf) ?? '')) stateful.add(name);
          watched.add(name);
        } else if (ts.isArrayLiteralExpression(init) || ts.isObjectLiteralExpression(init)) {
          watched.add(name);
        } else if (ts.isRegularExpressionLiteral(init)) {
          if (/\/[a-z]*[gy][a-z]*$/.test(init.text)) stateful.add(name);
        } else if (ts.isCallExpression(init) && isFunctionLike(init.expression)) {
          at(decl, `top-level ${name} = the result of a function run at load (an IIFE)`);
        }
      }
    } else if (ts.isExpressionStatement(stmt) && ts.isCallExpression(stmt.expression) && isFunctionLike(stmt.expression.expression)) {
      at(stmt, 'a function run at load (an IIFE)');
    } else if (ts.isClassDeclaration(stmt)) {
      for (const member of stmt.members) {
        const mods = ts.canHaveModifiers(member) ? (ts.getModifiers(member) ?? []) : [];
        const isStatic = mods.some((m) => m.kind === ts.SyntaxKind.StaticKeyword);
        const isReadonly = mods.some((m) => m.kind === ts.SyntaxKind.ReadonlyKeyword);
        if (ts.isPropertyDeclaration(member) && isStatic && !isReadonly) at(member, `static field ${member.name.getText(sf)} of ${stmt.name?.text ?? 'a class'}`);
      }
    }
  }
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const target = node.expression.expression;
      const method = node.expression.name.text;
      if (ts.isIdentifier(target) && watched.has(target.text) && MUTATORS.has(method)) at(node, `${target.text}.${method}(…) changes a module-level binding`);
      if (ts.isIdentifier(target) && stateful.has(target.text) && (method === 'exec' || method === 'test')) at(node, `${target.text}.${method}(…) moves the lastIndex of a module-level regular expression`);
      if (target.getText(sf) === 'Object' && method === 'assign' && node.arguments[0] && watched.has(rootName(node.arguments[0]) ?? '')) at(node, `Object.assign changes ${node.arguments[0].getText(sf)}`);
    }
    if (ts.isBinaryExpression(node) && isAssignment(node.operatorToken.kind) && !ts.isIdentifier(node.left)) {
      const name = rootName(node.left);
      if (name !== undefined && (watched.has(name) || stateful.has(name))) at(node, `${node.left.getText(sf)} = … changes a module-level binding`);
    }
    if ((ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) && (node.operator === ts.SyntaxKind.PlusPlusToken || node.operator === ts.SyntaxKind.MinusMinusToken)) {
      const name = ts.isIdentifier(node.operand) ? undefined : rootName(node.operand);
      if (name !== undefined && watched.has(name)) at(node, `${node.getText(sf)} changes a module-level binding`);
    }
    if (ts.isDeleteExpression(node) && watched.has(rootName(node.expression) ?? '')) at(node, `${node.getText(sf)} changes a module-level binding`);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

describe('module state', () => {
  it('no module of src/ keeps mutable state at its top level', () => {
    const found = sourceFiles(join(ROOT, 'src')).flatMap((path) => moduleState(relative(ROOT, path), readFileSync(path, 'utf8')));
    expect(found).toEqual([]);
  });

  // The scan itself: each shape it must catch, and what it must let be.
  it.each([
    ['let cache;', 'top-level let cache'],
    ['var n = 0;', 'top-level var n'],
    ['const seen = new Map(); export const f = (k) => seen.set(k, 1);', 'seen.set(…)'],
    ['const list = []; export function f(x) { list.push(x); }', 'list.push(…)'],
    ['const o = {}; export function f() { o.count = 1; }', 'o.count = …'],
    ['const o = { n: 0 }; export function f() { o.n++; }', 'o.n++'],
    ['import { table } from "./t.js"; export function f() { table.add(1); }', 'table.add(…)'],
    ['const ac = new AbortController();', 'new AbortController'],
    ['const seg = new Intl.Segmenter();', 'new Intl.Segmenter'],
    ['const re = /x/y; export function f(t) { re.lastIndex = 0; return re.exec(t); }', 'lastIndex'],
    ['const memo = (() => { const m = new Map(); return (k) => m.get(k); })();', 'IIFE'],
    ['export class A { static count = 0; }', 'static field count'],
  ])('catches %s', (source, what) => {
    expect(moduleState('x.ts', source).join('\n')).toContain(what);
  });

  it('lets constants be: collections read but never changed, regular expressions used by replace, functions', () => {
    const source = [
      'import { other } from "./o.js";',
      'const NAMES = new Map([["a", 1]]);',
      'const WORDS = new Set(["x"]);',
      'const LIST = ["a", "b"];',
      'const ANSI = /\\x1b\\[[0-9;]*m/g;',
      'export function f(k, t) { const local = new Map(); local.set(k, 1); return [NAMES.get(k), WORDS.has(k), LIST.includes(k), t.replace(ANSI, ""), other(k)]; }',
      'export class B { static readonly LIMIT = 3; private n = 0; bump() { this.n++; } }',
    ].join('\n');
    expect(moduleState('x.ts', source)).toEqual([]);
  });
});
