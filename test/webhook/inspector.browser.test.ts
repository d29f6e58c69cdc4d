// The inspector page in a real browser (Debian's chromium driven by playwright-core): the built binary's
// `webhook listen --inspect 0` fed by the emulator's own deliveries (`card put`). Skipped, saying why, when
// /usr/bin/chromium is missing, unless CARDBOARD_REQUIRE_BROWSER=1 (CI), where a missing browser fails.
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runMain, tempDir } from '../helpers/cli.js';
import { type BoardsFile, type RunningEmulator, startTestEmulator } from '../helpers/emulator.js';
import { type RunningListener, startListener, TestApp } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const HAVE_BROWSER = existsSync(CHROMIUM);
const REQUIRED = process.env.CARDBOARD_REQUIRE_BROWSER === '1';

const BOARD = 'b-inspect';
const TOKEN = 'tok-inspect-0123456789';
const KEY = 'sk-inspect-0123456789';
const IMG = '<img src=x onerror="window.__pwned=1">';
const SCRIPT = '</script><script>window.__pwned=2</script>';
const BOARDS: BoardsFile = {
  [BOARD]: { token: TOKEN, fields: ['Name', 'Status', IMG, SCRIPT], updateMode: 'Update if exists', createFields: false, webhookUrl: null, signingKey: KEY },
};

let browser: Browser | undefined;
let emu: RunningEmulator;
let cleanup: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

const SKIPPED = `inspector browser tests skipped: ${CHROMIUM} is missing (apt-get install chromium; CARDBOARD_REQUIRE_BROWSER=1 makes this a failure)`;
// Only without a browser (and not required) is anything skipped: then the report names why.
if (!HAVE_BROWSER && !REQUIRED) {
  console.warn(SKIPPED);
  describe('inspector page in a browser', () => {
    it.skip(SKIPPED, () => {});
  });
}

describe.skipIf(!HAVE_BROWSER && !REQUIRED)('inspector page in a browser', () => {
  beforeAll(async () => {
    if (!HAVE_BROWSER) throw new Error(`CARDBOARD_REQUIRE_BROWSER=1 but ${CHROMIUM} is missing`);
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // evil.example resolves to this machine: a DNS-rebinding page, as the browser would load it.
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--host-resolver-rules=MAP evil.example 127.0.0.1'],
    });
    emu = await startTestEmulator({ boards: structuredClone(BOARDS) });
  });

  afterAll(async () => {
    await browser?.close();
    await emu?.close();
  });

  /** `webhook listen --port 0 --inspect 0` (the built binary) with the board's deliveries pointed at it. */
  async function listen(args: string[] = []): Promise<RunningListener & { page: string }> {
    const l = await startListener(['--inspect', '0', ...args], { env: { CARDBOARD_SIGNING_KEY: KEY } });
    cleanup.push(async () => {
      emu.boards[BOARD]!.webhookUrl = null;
      if (l.child.exitCode === null) await l.stop('SIGKILL');
    });
    await l.waitFor(/Inspector: (\S+)/);
    emu.boards[BOARD]!.webhookUrl = l.url;
    return { ...l, page: /Inspector: (\S+)/.exec(l.stderr())![1]! };
  }

  async function open(url: string, width = 1280, height = 800): Promise<{ page: Page; dialogs: string[] }> {
    const context = await browser!.newContext({ viewport: { width, height } });
    cleanup.push(() => context.close());
    const page = await context.newPage();
    page.setDefaultTimeout(60_000);
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    const res = await page.goto(url);
    expect(res?.status()).toBe(200);
    await page.locator('#status', { hasText: 'live' }).waitFor();
    return { page, dialogs };
  }

  async function put(args: string[]): Promise<string> {
    const r = await runMain(['card', 'put', ...args, '--json'], { env: { CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD, CARDBOARD_TOKEN: TOKEN } });
    expect(r.code, r.stderr).toBe(0);
    return (JSON.parse(r.stdout) as { _id: string })._id;
  }

  const shots = process.env.CARDBOARD_SCREENSHOT_DIR ?? tmpdir();

  it('lists deliveries live as the emulator sends them, filters them, and shows one in detail (1280 and 390 px)', async () => {
    const l = await listen();
    const { page } = await open(l.page);
    const id = await put(['Name=Alpha', 'Status=Open']);
    const rows = page.locator('#rows tr');
    await rows.filter({ hasText: 'new card' }).waitFor();
    await put(['--id', id, 'Status=Done']);
    const changed = rows.filter({ hasText: 'Status: Open → Done' });
    await changed.waitFor();
    expect(await rows.count()).toBe(2);
    expect(await changed.locator('td.card .card-id').textContent()).toBe(id);
    expect(await changed.locator('td.card .card-name').textContent()).toBe('Alpha');
    expect(await changed.locator('td.verified').textContent()).toBe('yes');
    // Newest first.
    expect(await rows.first().textContent()).toContain('Open → Done');

    await page.fill('#filter', 'Done');
    await expect.poll(() => rows.filter({ visible: true }).count(), { timeout: 60_000 }).toBe(1);
    await page.fill('#filter', 'no such text');
    await expect.poll(() => rows.filter({ visible: true }).count(), { timeout: 60_000 }).toBe(0);
    await page.fill('#filter', '');

    await changed.click();
    const detail = page.locator('#detail');
    await detail.locator('table.changes').waitFor();
    expect(await detail.locator('table.changes tbody tr').allTextContents()).toEqual(['StatusOpen→Done']);
    expect(await detail.locator('table.headers').textContent()).toContain('x-signingKey***');
    expect(await detail.locator('table.headers').textContent()).not.toContain(KEY);
    // The body as a diff against the card's delivery before: the old value marked -, the new one +.
    const body = detail.locator('pre.body');
    expect(await body.locator('.del').allTextContents()).toEqual(['-   "Status": "Open"\n']);
    expect(await body.locator('.add').allTextContents()).toEqual(['+   "Status": "Done"\n']);
    expect(await body.textContent()).toBe(`  {\n    "_id": "${id}",\n    "Name": "Alpha",\n-   "Status": "Open"\n+   "Status": "Done"\n  }\n`);
    await page.screenshot({ path: join(shots, 'cardboard-inspector-1280.png'), fullPage: true });

    // Narrow: the list and the detail stack, and nothing is wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    const list = await page.locator('.list-pane').boundingBox();
    const pane = await detail.boundingBox();
    expect(pane!.y).toBeGreaterThanOrEqual(list!.y + list!.height - 1);
    expect(pane!.width).toBeLessThanOrEqual(390);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(shots, 'cardboard-inspector-390.png'), fullPage: true });
    expect(existsSync(join(shots, 'cardboard-inspector-390.png'))).toBe(true);
  });

  it('shows markup in names and values as text and runs none of it', async () => {
    const l = await listen();
    const { page, dialogs } = await open(l.page);
    await put(['--data', JSON.stringify({ Name: '<b>bold</b>', [IMG]: IMG, [SCRIPT]: SCRIPT })]);
    const row = page.locator('#rows tr').filter({ hasText: 'new card' });
    await row.waitFor();
    await row.click();
    const detail = page.locator('#detail');
    await detail.locator('table.changes').waitFor();
    const changes = await detail.locator('table.changes tbody tr').allTextContents();
    expect(changes).toEqual(expect.arrayContaining([`${IMG}—→${IMG}`, `${SCRIPT}—→${SCRIPT}`, 'Name—→<b>bold</b>']));
    expect(await detail.locator('pre.body').textContent()).toContain(SCRIPT);
    // Filtering by a field name made of markup finds it too.
    await page.fill('#filter', 'onerror');
    await expect.poll(() => page.locator('#rows tr').filter({ visible: true }).count(), { timeout: 60_000 }).toBe(1);
    expect(await page.evaluate<unknown>('window.__pwned')).toBeUndefined();
    expect(await page.evaluate<number>("document.querySelectorAll('img, b, script:not([src])').length")).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it('replays a delivery to a receiver with its exact bytes and the signing key', async () => {
    const got: Array<{ headers: IncomingHttpHeaders; body: Buffer }> = [];
    const receiver: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        got.push({ headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(200, { 'content-type': 'text/plain' }).end('received by the test');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    cleanup.push(
      () =>
        new Promise<void>((r) => {
          receiver.closeAllConnections();
          receiver.close(() => r());
        }),
    );
    const target = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    const record = join(tempDir(), 'hooks.jsonl');
    const l = await listen(['--record', record]);
    const { page } = await open(l.page);
    await put(['Name=Replayed', 'Status=New']);
    const row = page.locator('#rows tr').filter({ hasText: 'new card' });
    await row.waitFor();
    await row.click();
    await page.locator('#detail .replay button').waitFor();
    // No --forward-to: the page asks for the URL first.
    await page.click('#detail .replay button');
    await page.locator('#detail .answer', { hasText: 'Replay to' }).waitFor();
    await page.fill('#replay-url', target);
    await page.click('#detail .replay button');
    await page.locator('#detail .answer', { hasText: '200 in' }).waitFor();
    expect(await page.locator('#detail .answer pre').textContent()).toBe('received by the test');
    expect(got).toHaveLength(1);
    const recorded = JSON.parse(readFileSync(record, 'utf8').trim()) as { bodyBase64: string };
    expect(got[0]!.body.equals(Buffer.from(recorded.bodyBase64, 'base64'))).toBe(true);
    expect(got[0]!.headers['x-signingkey']).toBe(KEY);
  });

  it('shows each forward to --forward-to in the list, and replays there without asking for a URL', async () => {
    const app = new TestApp();
    await app.up();
    cleanup.push(() => app.down());
    const l = await listen(['--forward-to', app.url]);
    const { page } = await open(l.page);
    await put(['Name=Forwarded', 'Status=Open']);
    const row = page.locator('#rows tr').filter({ hasText: 'new card' });
    await row.locator('td.fwd.ok', { hasText: '✓ 200' }).waitFor();
    await row.click();
    await page.locator('#detail .replay', { hasText: `to ${app.url}` }).waitFor();
    await page.click('#detail .replay button');
    await page.locator('#detail .answer', { hasText: `${app.url}: 200 in` }).waitFor();
    expect(await page.locator('#detail .answer pre').textContent()).toBe('{"got":2}');
    expect(app.received).toHaveLength(2);
    expect(app.received[1]!.body.equals(app.received[0]!.body)).toBe(true);
    expect(app.received[1]!.headers['x-signingkey']).toBe(KEY);
  });

  it('answers 403 to the browser without the token, with a wrong one, and for another Host name', async () => {
    const l = await listen();
    const { page } = await open(l.page);
    const url = new URL(l.page);
    const token = url.pathname.split('/')[1]!;
    for (const path of ['/', '/events', `/${token.slice(0, -1)}/`]) {
      const res = await page.goto(`${url.origin}${path}`);
      expect(res?.status(), path).toBe(403);
      expect(res?.headers()['content-security-policy']).toContain("default-src 'none'");
    }
    // DNS rebinding: evil.example resolves here, so the browser sends Host: evil.example:PORT.
    const rebound = await page.goto(`http://evil.example:${url.port}${url.pathname}`);
    expect(rebound?.status()).toBe(403);
    expect(await page.content()).not.toContain('webhook inspector');
    // An action from the page's own origin without the token header, sent by the browser's fetch.
    await page.goto(l.page);
    const status = await page.evaluate(async (p) => (await fetch(`${p}replay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"seq":1}' })).status, l.page);
    expect(status).toBe(403);
  });
});
