// A server that echoes the x-token it received must not get the token into anything
// cardboard prints or writes (stdout, stderr with and without --verbose, --results, --rejects, the
// journal, the config directory), and a one-letter token must mangle no message.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, type CliResult, runMain, tempDir } from '../helpers/cli.js';

const TOKEN = 'echo-me-0123456789abcdef';
const BOARD = 'b1';

/** Answers as the service would, except that every answer repeats the token it was sent. */
function echoingService(req: IncomingMessage, res: ServerResponse): void {
  const token = String(req.headers['x-token']);
  const json = (status: number, value: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  };
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString()));
  req.on('end', () => {
    const url = req.url!;
    if (url === `/api/aptlet/${BOARD}/schema`) {
      return json(200, [
        { name: 'Name', uuid: 'u1', note: `schema for ${token}` },
        { name: 'Status', uuid: 'u2' },
      ]);
    }
    if (url.startsWith(`/api/aptlet/${BOARD}/card/`)) return json(404, { message: `no card ${url.split('/').pop()} for ${token}` });
    if (req.method === 'POST' && url === `/api/aptlet/${BOARD}`) {
      const card = JSON.parse(body) as { Name: string };
      if (card.Name.startsWith('reject')) return json(400, { error: `bad token ${token}` });
      if (card.Name.startsWith('fail')) {
        res.writeHead(500, { 'content-type': 'text/plain' });
        return res.end(`server error, x-token ${token}`);
      }
      return json(200, { _id: `id-${token}-${card.Name}`, ...card });
    }
    json(404, { error: 'no route' });
  });
}

let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer(echoingService);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/** Every file under `dir`, recursively, with its text. */
function filesUnder(dir: string): Array<[string, string]> {
  return readdirSync(dir).flatMap((name): Array<[string, string]> => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [[path, readFileSync(path, 'utf8')]];
  });
}

/** Run the CLI at the echoing server: the built binary without --verbose, in-process (main()) with it. */
function card(args: string[], token: string, configDir = tempDir()): Promise<CliResult> {
  return runMain(args, { configDir, env: { CARDBOARD_BASE_URL: baseUrl, CARDBOARD_BOARD: BOARD, CARDBOARD_TOKEN: token }, spawn: !args.includes('--verbose') });
}

describe('a server that echoes x-token', () => {
  it.each([[[]], [['--verbose']]])('card get and card put %j: the token is in no output, *** is where it was', async (extra) => {
    const get = await card([...extra, 'card', 'get', 'c1'], TOKEN);
    expect(get.code).toBe(1);
    expect(get.stderr).toContain(`404 Not Found from GET ${baseUrl}/api/aptlet/${BOARD}/card/c1: no card c1 for ***`);
    const rejected = await card([...extra, 'card', 'put', 'Name=reject-me'], TOKEN);
    expect(rejected.code).toBe(1);
    expect(rejected.stderr).toContain('bad token ***');
    const failed = await card([...extra, 'card', 'put', 'Name=fail-me'], TOKEN);
    expect(failed.stderr).toContain('server error, x-token ***');
    const saved = await card([...extra, 'card', 'put', 'Name=fine'], TOKEN);
    expect(saved.code).toBe(0);
    expect(saved.stdout).toContain('id-***-fine');
    if (extra.length > 0) expect(get.stderr).toMatch(/\[http\] GET .*card\/c1 → 404/);
    for (const r of [get, rejected, failed, saved]) expect(r.stdout + r.stderr).not.toContain(TOKEN);
  });

  it.each([[[]], [['--verbose']]])('schema and import %j: not in stdout, stderr, --results, --rejects, the journal or the schema cache', async (extra) => {
    const dir = tempDir('cardboard-secrets-');
    const configDir = tempDir();
    const file = join(dir, 'cards.csv');
    writeFileSync(file, 'Name,Status\nreject-1,Open\nfail-2,Open\nok-3,Done\n');
    const results = join(dir, 'r.csv');
    const rejects = join(dir, 'x.csv');
    // `schema` fills the schema cache (the import itself reads the schema afresh).
    const schema = await card([...extra, 'schema', '--json'], TOKEN, configDir);
    expect(schema.stdout).toContain('schema for ***');
    const r = await card([...extra, 'import', file, '--results', results, '--rejects', rejects], TOKEN, configDir);
    expect(r.code).toBe(3);
    const resultsText = readFileSync(results, 'utf8');
    expect(resultsText).toContain('bad token ***');
    expect(resultsText).toContain('server error, x-token ***');
    expect(resultsText).toContain('id-***-ok-3');
    expect(readFileSync(rejects, 'utf8')).toContain('bad token ***');
    // The run ended with rejected rows, so its journal is kept for the next run: redacted like the rest.
    const journals = filesUnder(join(dir, '.cardboard-journal'));
    expect(journals).toHaveLength(1);
    expect(journals[0]![1]).toContain('id-***-ok-3');
    // The schema cache lives apart from the config (XDG_CACHE_HOME), and an env-only run leaves the config dir empty.
    const config = [...filesUnder(configDir), ...filesUnder(childEnv({ configDir }).XDG_CACHE_HOME!)];
    expect(config.some(([path]) => path.includes('schema-'))).toBe(true);
    for (const [path, text] of [...filesUnder(dir), ...config]) expect(text, path).not.toContain(TOKEN);
    expect(schema.stdout + schema.stderr + r.stdout + r.stderr).not.toContain(TOKEN);
  });

  it('a one-letter token mangles no message: the URL stays whole, the echoed token is hidden', async () => {
    const r = await card(['card', 'get', 'c1'], 't');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error: 404 Not Found from GET ${baseUrl}/api/aptlet/${BOARD}/card/c1: no card c1 for ***\n`);
    expect(r.stderr).toContain('hint: Check the board id');
  });
});
