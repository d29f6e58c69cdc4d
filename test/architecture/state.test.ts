// What a module of src/ may hold and read besides what it is passed.
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
//   - a static class field that is not readonly;
// but where STATE_EXCEPTIONS says why.
//
// One clock: time is read and waited for through the Clock a module is given (src/clock.ts), so a test runs
// it in simulated time; no Date.now(), new Date() for "now", performance.now(), process.hrtime, setTimeout
// or setInterval beside it, but where CLOCK_EXCEPTIONS says why.
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

/**
 * Module state kept on purpose, by module and binding, and why. The shorter, the better: each entry is state
 * that test files sharing a worker also share.
 */
const STATE_EXCEPTIONS: { path: string; name: string; why: string }[] = [
  {
    path: 'src/file-lock.ts',
    name: 'heldLocks',
    why: "the locks this process holds, for the one 'exit' hook that releases them (process.exit runs no finally): process-wide, as that exit is; empty whenever no lock is held",
  },
];

/** Everything in `text` (one module's source) that is module-level mutable state: where, what, and the binding. */
function moduleState(file: string, text: string): { line: string; name: string }[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: { line: string; name: string }[] = [];
  const at = (node: ts.Node, what: string, name: string) => found.push({ line: `${file}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}: ${what}`, name });
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
          at(decl, `top-level ${stmt.declarationList.flags & ts.NodeFlags.Let ? 'let' : 'var'} ${name}`, name);
          continue;
        }
        let init = decl.initializer;
        while (init && (ts.isAsExpression(init) || ts.isSatisfiesExpression(init) || ts.isParenthesizedExpression(init))) init = init.expression;
        if (init === undefined) continue;
        if (ts.isNewExpression(init)) {
          const cls = init.expression.getText(sf);
          if (!INERT.has(cls)) at(decl, `top-level ${name} = new ${cls}(…)`, name);
          if (cls === 'RegExp' && /[gy]/.test(init.arguments?.[1]?.getText(sf) ?? '')) stateful.add(name);
          watched.add(name);
        } else if (ts.isArrayLiteralExpression(init) || ts.isObjectLiteralExpression(init)) {
          watched.add(name);
        } else if (ts.isRegularExpressionLiteral(init)) {
          if (/\/[a-z]*[gy][a-z]*$/.test(init.text)) stateful.add(name);
        } else if (ts.isCallExpression(init) && isFunctionLike(init.expression)) {
          at(decl, `top-level ${name} = the result of a function run at load (an IIFE)`, name);
        }
      }
    } else if (ts.isExpressionStatement(stmt) && ts.isCallExpression(stmt.expression) && isFunctionLike(stmt.expression.expression)) {
      at(stmt, 'a function run at load (an IIFE)', '');
    } else if (ts.isClassDeclaration(stmt)) {
      for (const member of stmt.members) {
        const mods = ts.canHaveModifiers(member) ? (ts.getModifiers(member) ?? []) : [];
        const isStatic = mods.some((m) => m.kind === ts.SyntaxKind.StaticKeyword);
        const isReadonly = mods.some((m) => m.kind === ts.SyntaxKind.ReadonlyKeyword);
        if (ts.isPropertyDeclaration(member) && isStatic && !isReadonly) at(member, `static field ${member.name.getText(sf)} of ${stmt.name?.text ?? 'a class'}`, `${stmt.name?.text ?? ''}.${member.name.getText(sf)}`);
      }
    }
  }
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const target = node.expression.expression;
      const method = node.expression.name.text;
      if (ts.isIdentifier(target) && watched.has(target.text) && MUTATORS.has(method)) at(node, `${target.text}.${method}(…) changes a module-level binding`, target.text);
      if (ts.isIdentifier(target) && stateful.has(target.text) && (method === 'exec' || method === 'test')) at(node, `${target.text}.${method}(…) moves the lastIndex of a module-level regular expression`, target.text);
      const assigned = node.arguments[0] && rootName(node.arguments[0]);
      if (target.getText(sf) === 'Object' && method === 'assign' && assigned !== undefined && watched.has(assigned)) at(node, `Object.assign changes ${node.arguments[0]!.getText(sf)}`, assigned);
    }
    if (ts.isBinaryExpression(node) && isAssignment(node.operatorToken.kind) && !ts.isIdentifier(node.left)) {
      const name = rootName(node.left);
      if (name !== undefined && (watched.has(name) || stateful.has(name))) at(node, `${node.left.getText(sf)} = … changes a module-level binding`, name);
    }
    if ((ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) && (node.operator === ts.SyntaxKind.PlusPlusToken || node.operator === ts.SyntaxKind.MinusMinusToken)) {
      const name = ts.isIdentifier(node.operand) ? undefined : rootName(node.operand);
      if (name !== undefined && watched.has(name)) at(node, `${node.getText(sf)} changes a module-level binding`, name);
    }
    const deleted = ts.isDeleteExpression(node) ? rootName(node.expression) : undefined;
    if (deleted !== undefined && watched.has(deleted)) at(node, `${node.getText(sf)} changes a module-level binding`, deleted);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/**
 * Where the real clock or real timers are used on purpose, and why. A path ending in `/` is a folder.
 */
const CLOCK_EXCEPTIONS: { path: string; reads: string[]; why: string }[] = [
  { path: 'src/clock.ts', reads: ['Date.now', 'setTimeout'], why: 'realClock, the Clock of a real run' },
  { path: 'src/emulator/', reads: ['*'], why: 'the emulator is a program of its own (a server), with no Clock passed to it: its times are the service\'s' },
  {
    path: 'src/http/dispatch.ts',
    reads: ['performance.now', 'setTimeout'],
    why: 'deadlines of sockets in flight: real I/O, timed on the monotonic clock beside undici\'s own timeouts; no simulated run reaches a socket',
  },
  { path: 'src/import/board-lock.ts', reads: ['setTimeout'], why: 'the deadline of a DNS lookup: real I/O, like a socket\'s' },
  { path: 'src/webhook/client.ts', reads: ['performance.now'], why: 'how long a request to the user\'s app took: real I/O, timed on the monotonic clock as the dispatch\'s deadlines are' },
  {
    path: 'src/commands/query/worker.ts',
    reads: ['performance.now'],
    why: 'how long rows found by SQLite have waited in the query\'s worker thread for the main thread, which no Clock reaches: real computing, timed on the monotonic clock',
  },
  { path: 'src/webhook/tunnel/child.ts', reads: ['setTimeout'], why: 'how long a tunnel tool may take to stop after SIGTERM: a real child process' },
];

/** The real-clock reads and real timers in one module's source, as `file:line: what`. */
function clockReads(file: string, text: string): { line: string; read: string }[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: { line: string; read: string }[] = [];
  const at = (node: ts.Node, read: string) => found.push({ line: `${file}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}: ${read}`, read });
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression)) {
      const read = `${node.expression.text}.${node.name.text}`;
      if (read === 'Date.now' || read === 'performance.now' || read === 'process.hrtime') at(node, read);
    }
    if (ts.isNewExpression(node) && node.expression.getText(sf) === 'Date' && (node.arguments?.length ?? 0) === 0) at(node, 'new Date()');
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression)) {
      const name = node.expression.text;
      if (name === 'Date' || name === 'setTimeout' || name === 'setInterval') at(node, name === 'Date' ? 'Date()' : name);
    }
    if (ts.isImportDeclaration(node) && /^(node:)?timers(\/promises)?$/.test((node.moduleSpecifier as ts.StringLiteral).text)) at(node, 'node:timers');
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

describe('module state', () => {
  it('no module of src/ keeps mutable state at its top level', () => {
    const found = sourceFiles(join(ROOT, 'src')).flatMap((path) => {
      const file = relative(ROOT, path);
      const kept = new Set(STATE_EXCEPTIONS.filter((e) => e.path === file).map((e) => e.name));
      return moduleState(file, readFileSync(path, 'utf8'))
        .filter((f) => !kept.has(f.name))
        .map((f) => f.line);
    });
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
    expect(moduleState('x.ts', source).map((f) => f.line).join('\n')).toContain(what);
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

describe('one clock', () => {
  it('no module of src/ reads the real clock or sets a real timer beside the Clock it is given, but the exceptions', () => {
    const found = sourceFiles(join(ROOT, 'src')).flatMap((path) => {
      const file = relative(ROOT, path);
      const allowed = CLOCK_EXCEPTIONS.filter((e) => (e.path.endsWith('/') ? file.startsWith(e.path) : file === e.path)).flatMap((e) => e.reads);
      return clockReads(file, readFileSync(path, 'utf8'))
        .filter((r) => !allowed.includes('*') && !allowed.includes(r.read))
        .map((r) => r.line);
    });
    expect(found).toEqual([]);
  });

  it.each([
    ['const t = Date.now();', 'Date.now'],
    ['export function f(now = Date.now) { return now(); }', 'Date.now'],
    ['const t = performance.now();', 'performance.now'],
    ['const d = new Date();', 'new Date()'],
    ['const s = Date();', 'Date()'],
    ['setInterval(() => {}, 200);', 'setInterval'],
    ['const t = setTimeout(() => {}, 5);', 'setTimeout'],
    ["import { setTimeout as sleep } from 'node:timers/promises';", 'node:timers'],
  ])('catches %s', (source, read) => {
    expect(clockReads('x.ts', source).map((r) => r.read)).toContain(read);
  });

  it('lets a date be made from a time, and a method of that name be called', () => {
    expect(clockReads('x.ts', 'const d = new Date(clock.now()); const t = Date.parse("2026"); server.setTimeout(5);')).toEqual([]);
  });
});
