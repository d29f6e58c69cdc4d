// Every --json shape is documented once, in docs/json.md, and this test checks each documented shape
// against what the command really prints, run against the emulator. It reads the page itself, so a shape
// changed in the code or on the page fails here.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext } from '../../src/context.js';
import { buildProgram } from '../../src/program.js';
import { cli } from '../commands/helpers.js';
import { runMain, tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, startTestEmulator, TOKEN } from '../helpers/emulator.js';
import { filledMirror } from '../query/mirror-fixture.js';
import { post, startListener, TestApp } from '../webhook/helpers.js';

const PAGE = fileURLToPath(new URL('../../docs/json.md', import.meta.url));

/** One documented shape: the command of its heading, one JSON document or one object a line, the shape. */
interface Documented {
  command: string;
  ndjson: boolean;
  shape: unknown;
}

/** docs/json.md: each `## \`cardboard …\`` heading and the shape block under it. */
function documentedShapes(): Documented[] {
  const text = readFileSync(PAGE, 'utf8');
  const out: Documented[] = [];
  for (const part of text.split(/^## /m).slice(1)) {
    const command = /^`([^`]+)`/.exec(part)?.[1];
    const block = /```(json|ndjson)-shape\n([\s\S]*?)```/.exec(part);
    if (!command || !block) throw new Error(`a heading of docs/json.md without a command or shape block: ${part.slice(0, 80)}`);
    out.push({ command, ndjson: block[1] === 'ndjson', shape: JSON.parse(block[2]!) });
  }
  return out;
}

function typeMatches(v: unknown, type: string): boolean {
  return type.split('|').some((t) => {
    if (t === 'any') return true;
    if (t === 'null') return v === null;
    if (t === 'string' || t === 'boolean' || t === 'number') return typeof v === t;
    if (t === 'integer') return Number.isInteger(v);
    if (/^'.*'$/.test(t)) return v === t.slice(1, -1);
    throw new Error(`unknown type in a documented shape: ${t}`);
  });
}

/** Every way `v` departs from `shape` (the notation docs/json.md explains), as `path: problem`. */
export function shapeErrors(v: unknown, shape: unknown, at = '$'): string[] {
  if (typeof shape === 'string') return typeMatches(v, shape) ? [] : [`${at}: ${JSON.stringify(v)} is not ${shape}`];
  if (typeof shape === 'boolean') return v === shape ? [] : [`${at}: ${JSON.stringify(v)} is not ${shape}`];
  if (Array.isArray(shape)) {
    if (!Array.isArray(v)) return [`${at}: not an array`];
    return v.flatMap((item, i) => shapeErrors(item, shape[0], `${at}[${i}]`));
  }
  const o = shape as Record<string, unknown>;
  if (Object.hasOwn(o, '|')) {
    const alternatives = o['|'] as unknown[];
    return alternatives.some((a) => shapeErrors(v, a, at).length === 0) ? [] : [`${at}: ${JSON.stringify(v)} matches none of ${JSON.stringify(alternatives)}`];
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return [`${at}: ${JSON.stringify(v)} is not an object`];
  const value = v as Record<string, unknown>;
  const errors: string[] = [];
  const declared = new Set<string>();
  for (const [key, sub] of Object.entries(o)) {
    if (key === '*') continue;
    const name = key.endsWith('?') ? key.slice(0, -1) : key;
    declared.add(name);
    if (Object.hasOwn(value, name)) errors.push(...shapeErrors(value[name], sub, `${at}.${name}`));
    else if (!key.endsWith('?')) errors.push(`${at}: missing key ${name}`);
  }
  for (const key of Object.keys(value)) {
    if (declared.has(key)) continue;
    if (Object.hasOwn(o, '*')) errors.push(...shapeErrors(value[key], o['*'], `${at}.${key}`));
    else errors.push(`${at}: key ${key} is not documented`);
  }
  return errors;
}

describe('the shape notation of docs/json.md', () => {
  it('finds missing, extra and mistyped keys, unions and literals', () => {
    expect(shapeErrors({ _id: 'a', Name: 1 }, { _id: 'string', '*': 'any' })).toEqual([]);
    expect(shapeErrors({ _id: 1 }, { _id: 'string' })).toEqual(['$._id: 1 is not string']);
    expect(shapeErrors({}, { a: 'integer', 'b?': 'string' })).toEqual(['$: missing key a']);
    expect(shapeErrors({ a: 1, c: 2 }, { a: 'integer' })).toEqual(['$: key c is not documented']);
    expect(shapeErrors([{ a: 1.5 }], [{ a: 'integer' }])).toEqual(['$[0].a: 1.5 is not integer']);
    expect(shapeErrors('env', "'flag'|'env'")).toEqual([]);
    expect(shapeErrors(null, { '|': ['null', { value: 'string' }] })).toEqual([]);
    expect(shapeErrors({ value: 3 }, { '|': ['null', { value: 'string' }] })).toHaveLength(1);
    expect(shapeErrors(true, false)).toHaveLength(1);
  });
});

/** How to get each documented command's real output: one or more stdouts (each variant is checked). */
type Runner = () => Promise<string[]>;

describe('every --json shape in docs/json.md matches the real output (emulator)', () => {
  let emu: RunningEmulator;
  let id: string;
  const ok = async (args: string[], opts: Parameters<typeof cli>[2] = {}, codes = [0]): Promise<string> => {
    const r = await cli(emu, args, opts);
    expect(codes, `${args.join(' ')}: ${r.stderr}`).toContain(r.code);
    return r.stdout;
  };
  beforeAll(async () => {
    emu = await startTestEmulator();
    id = (await ok(['card', 'put', 'Name=First', 'Status=Open', 'Priority:=2'])).trim();
    await ok(['card', 'put', 'Name=Second', 'Owner:={"name":"Ada"}']);
  });
  afterAll(async () => {
    await emu.close();
  });

  /** Rows that update First, create a new card, and one that cannot be read: every list of the report has items. */
  const csv = (status: string, name: string) => {
    const file = join(tempDir(), 'cards.csv');
    writeFileSync(file, `Name,Status,Notes\nFirst,${status},x\n${name},Open,y\n"broken,Open,z\n`);
    return file;
  };

  const runners: Record<string, Runner> = {
    'cardboard schema --json': async () => [await ok(['schema', '--json'])],
    'cardboard card put --json': async () => [await ok(['card', 'put', 'Name=Put', 'Priority:=7', '--json'])],
    // --json is --format json: one shape for both.
    'cardboard card get --format json': async () => [
      await ok(['card', 'get', id, '--format', 'json']),
      await ok(['card', 'get', id, '--fields', 'Name', '--json']),
    ],
    'cardboard card get --format ndjson': async () => [await ok(['card', 'get', id]), await ok(['card', 'get', id, '--fields', 'Status,Name', '--format', 'ndjson'])],
    // --json is --format json: one shape for both.
    'cardboard card list --format json': async () => [
      await ok(['card', 'list', '--format', 'json']),
      await ok(['card', 'list', '--all', '--fields', 'Name', '--format', 'json']),
      await ok(['card', 'list', '--json']),
    ],
    'cardboard card list --format ndjson': async () => [await ok(['card', 'list', '--format', 'ndjson'])],
    'cardboard query --format json': async () => {
      const { env } = await filledMirror();
      const sql = "SELECT _id, Name, Points, NULL AS empty, x'00' AS bytes FROM card_fields";
      return [await ok(['query', sql, '--format', 'json'], { env }), await ok(['query', '--json', '--fields', '_id', sql], { env })];
    },
    'cardboard query --format ndjson': async () => [await ok(['query', 'SELECT * FROM card_fields'], { env: (await filledMirror()).env })],
    'cardboard comment --json': async () => [await ok(['comment', id, 'Deployed', '--json'])],
    'cardboard import --json': async () => {
      const dir = tempDir();
      return [await ok(['import', csv('Done', 'Third'), '--skip-column', 'Notes', '--match-on', 'Name', '--results', join(dir, 'r.csv'), '--json'], {}, [3])];
    },
    'cardboard import --dry-run --json': async () => {
      // Exit 3: the broken line would be rejected (the JSON is on stdout all the same).
      const stdout = await ok(['import', csv('Blocked', 'Fourth'), '--skip-column', 'Notes', '--match-on', 'Name', '--dry-run', '--json'], {}, [3]);
      expect(JSON.parse(stdout)).toMatchObject({ rejections: [{ line: 4 }], changes: [{ line: 2 }], sample: [{ line: 2 }, { line: 3 }] });
      return [stdout];
    },
    'cardboard board list --json': async () => {
      const configDir = tempDir();
      const empty = await ok(['board', 'list', '--json'], { configDir });
      await ok(['board', 'add', 'work', '--base-url', emu.url, '--id', BOARD_ID, '--token-stdin'], { configDir, input: `${TOKEN}\n`, env: { CARDBOARD_BASE_URL: undefined, CARDBOARD_BOARD: undefined, CARDBOARD_TOKEN: undefined } });
      return [empty, await ok(['board', 'list', '--json'], { configDir })];
    },
    'cardboard board show --json': async () => {
      const none = await runMain(['board', 'show', '--json'], { configDir: tempDir() });
      return [await ok(['board', 'show', '--json']), none.stdout];
    },
    'cardboard webhook listen --json': async () => {
      // An app that answers the first forward 500 (text), the others 200 (JSON): a forward line of each.
      const app = new TestApp();
      app.answer = (n) => (n === 1 ? { status: 500, headers: { 'content-type': 'text/plain' }, body: 'boom' } : { status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' });
      await app.up();
      const l = await startListener(['--json', '--inspect', '0', '--forward-to', app.url], { env: { CARDBOARD_SIGNING_KEY: 'sk-shapes' } });
      const page = (await l.waitFor(/Inspector: (\S+)/), /Inspector: (\S+)/.exec(l.stderr())![1]!);
      expect(await post(l.url, '{"_id":"a","Status":"Open"}', 'sk-shapes')).toBe(200);
      expect(await post(l.url, '{"_id":"a","Status":"Done"}', 'sk-shapes')).toBe(200);
      expect(await post(l.url, '{"event":"comment.created","cardId":"a","data":{"userName":"Ada","content":"ok"}}', 'sk-shapes')).toBe(200);
      expect(await post(l.url, '{"event":"card.deleted","card":{"_id":"a"}}', 'sk-shapes')).toBe(200);
      expect(await post(l.url, 'plain text', 'sk-shapes')).toBe(200);
      await l.waitFor(/plain text/, 'stdout');
      await app.waitForCompleted(6);
      await l.waitFor(/"forward":\{"seq":5,/, 'stdout');
      // A replay from the inspector's API, edited, to nobody: a `replay` line with its error.
      const replayed = await fetch(`${page}api/deliveries/1/replay`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-cardboard-token': new URL(page).pathname.split('/')[1]! },
        body: JSON.stringify({ url: 'http://127.0.0.1:1/down', body: '{"_id":"a"}' }),
      });
      expect(replayed.status).toBe(200);
      await l.waitFor(/"replay"/, 'stdout');
      const { stdout } = await l.stop();
      await app.down();
      expect(stdout).toMatch(/^\{"forward":\{"seq":1,.*"status":500,/m);
      return [stdout];
    },
    'cardboard webhook replay --json': async () => {
      const record = join(tempDir(), 'rec.jsonl');
      const source = await startListener(['--record', record], { env: { CARDBOARD_SIGNING_KEY: 'sk-shapes' } });
      expect(await post(source.url, '{"_id":"a"}', 'sk-shapes')).toBe(200);
      await source.stop();
      const receiver = await startListener(['--json'], { env: { CARDBOARD_SIGNING_KEY: 'sk-shapes' } });
      const answered = await runMain(['webhook', 'replay', record, '--to', receiver.url, '--json'], { env: { CARDBOARD_SIGNING_KEY: 'sk-shapes' } });
      await receiver.stop();
      expect(answered.code, answered.stderr).toBe(0);
      // Nobody listening: status null and the error.
      const unanswered = await runMain(['webhook', 'replay', record, '--to', receiver.url, '--json'], { env: { CARDBOARD_SIGNING_KEY: 'sk-shapes' } });
      expect(unanswered.code).toBe(1);
      return [answered.stdout, unanswered.stdout];
    },
    'cardboard webhook send --json': async () => {
      const receiver = await startListener(['--json'], { env: { CARDBOARD_SIGNING_KEY: 'sk-shapes' } });
      const answered = await runMain(['webhook', 'send', '--to', receiver.url, '--json'], { env: { CARDBOARD_SIGNING_KEY: 'sk-shapes' } });
      await receiver.stop();
      expect(answered.code, answered.stderr).toBe(0);
      // Nobody listening: status null and the error.
      const unanswered = await runMain(['webhook', 'send', '--to', receiver.url, '--json'], { env: { CARDBOARD_SIGNING_KEY: 'sk-shapes' } });
      expect(unanswered.code).toBe(1);
      return [answered.stdout, unanswered.stdout];
    },
    'cardboard mirror pull --json': async () => {
      const env = { CARDBOARD_MIRROR: join(tempDir(), 'mirror.db') };
      // A resumed pull's `resumedAt` is checked where a pull is killed (test/mirror/pull.e2e.test.ts).
      return [await ok(['mirror', 'pull', '--json'], { env }), await ok(['mirror', 'pull', '--json'], { env })];
    },
    'cardboard mirror status --json': async () => {
      const env = { CARDBOARD_MIRROR: join(tempDir(), 'mirror.db') };
      await ok(['mirror', 'pull'], { env });
      return [await ok(['mirror', 'status', '--json'], { env })];
    },
  };
  /** Flags documented under another heading: `card list --json` is `card list --format json`. */
  const SAME_AS = new Map([
    ['cardboard card list --json', 'cardboard card list --format json'],
    ['cardboard card get --json', 'cardboard card get --format json'],
    ['cardboard query --json', 'cardboard query --format json'],
  ]);

  it('documents exactly the commands this test runs, and every command with a --json flag', async () => {
    const documented = documentedShapes().map((d) => d.command);
    expect(new Set(documented).size).toBe(documented.length); // once each
    expect([...documented].sort()).toEqual(Object.keys(runners).sort());
    const ctx = createContext({ env: {} });
    const program = await buildProgram(ctx, [], () => ctx, true);
    const withJson: string[] = [];
    const walk = (c: Command, path: string[]) => {
      if (c.options.some((o) => o.long === '--json')) withJson.push(`cardboard ${path.join(' ')} --json`);
      for (const sub of c.commands) walk(sub, [...path, sub.name()]);
    };
    walk(program, []);
    expect(withJson.length).toBeGreaterThan(5);
    for (const command of withJson) expect(documented, `${command} is not in docs/json.md`).toContain(SAME_AS.get(command) ?? command);
  });

  for (const doc of documentedShapes()) {
    it(`${doc.command}`, async () => {
      const run = runners[doc.command];
      expect(run, `no runner for ${doc.command}`).toBeDefined();
      for (const stdout of await run!()) {
        const values = doc.ndjson ? stdout.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as unknown) : [JSON.parse(stdout) as unknown];
        expect(values.length, stdout).toBeGreaterThan(0);
        for (const value of values) expect(shapeErrors(value, doc.shape), JSON.stringify(value)).toEqual([]);
      }
    });
  }
});
