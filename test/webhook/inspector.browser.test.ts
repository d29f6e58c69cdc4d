// The inspector page in a real browser (Debian's chromium driven by playwright-core): the built binary's
// `webhook listen --inspect 0` fed by the emulator's own deliveries (`card put`). Skipped, saying why, when
// /usr/bin/chromium is missing, unless CARDBOARD_REQUIRE_BROWSER=1 (CI), where a missing browser fails.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runMain, tempDir } from '../helpers/cli.js';
import { type BoardsFile, type RunningEmulator, startTestEmulator } from '../helpers/emulator.js';
import { startLocalServer } from '../helpers/receiver.js';
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

  it('marks a delivery no --forward-to route takes as not forwarded, and forwards the one its filter takes', async () => {
    const app = new TestApp();
    await app.up();
    cleanup.push(() => app.down());
    const l = await listen(['--forward-to', app.url, '--where', 'Status=Done']);
    const { page } = await open(l.page);
    await put(['Name=Skipped', 'Status=Open']);
    const skipped = page.locator('#rows tr').filter({ hasText: 'Skipped' });
    await skipped.locator('td.fwd', { hasText: 'not forwarded' }).waitFor();
    await put(['Name=Taken', 'Status=Done']);
    await page.locator('#rows tr').filter({ hasText: 'Taken' }).locator('td.fwd.ok', { hasText: '✓ 200' }).waitFor();
    expect(await skipped.locator('td.fwd').textContent()).toBe('not forwarded');
    expect(app.received).toHaveLength(1);
    expect(JSON.parse(app.received[0]!.body.toString('utf8'))).toMatchObject({ Name: 'Taken', Status: 'Done' });
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

  /** POST a delivery straight to the listener, signed with the key: ids, names and headers of the test's choosing. */
  async function deliver(l: RunningListener, body: unknown, headers: Record<string, string> = {}): Promise<void> {
    const res = await fetch(l.url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-signingKey': KEY, ...headers }, body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  }

  /** A row of the list by its seq. */
  const rowOf = (page: Page, seq: number) => page.locator('#rows tr', { has: page.locator('td.seq', { hasText: new RegExp(`^#${seq}$`) }) });

  /**
   * An app that holds each request until the test answers it (`answer(status)`), or answers at once with
   * `status` once `holding` is false; every request it read is in `got`.
   */
  async function heldApp(): Promise<{ url: string; got: Array<{ headers: IncomingHttpHeaders; body: Buffer }>; held: () => number; answer: (status: number) => void; holding: boolean; close: () => Promise<void> }> {
    const waiting: Array<(status: number) => void> = [];
    const app = {
      url: '',
      got: [] as Array<{ headers: IncomingHttpHeaders; body: Buffer }>,
      holding: true,
      held: () => waiting.length,
      answer: (status: number) => waiting.shift()?.(status),
      close: async () => {},
    };
    const server = await startLocalServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        app.got.push({ headers: req.headers, body: Buffer.concat(chunks) });
        const reply = (status: number) => res.writeHead(status, { 'content-type': 'application/json', 'x-app': 'yes' }).end(JSON.stringify({ app: 'answer', status }));
        if (app.holding) waiting.push(reply);
        else reply(200);
      });
    });
    app.url = server.url;
    app.close = () => server.close();
    cleanup.push(() => server.close());
    return app;
  }

  interface Layout {
    scroll: number;
    client: number;
    panes: Array<{ name: string; scroll: number; client: number }>;
    rows: Array<{ seq: string; changeWidth: number; lines: number; words: number; fwdText: string; fwdCut: boolean }>;
  }
  // Run in the page (the tests are compiled without the DOM's types, so it is plain script text). Lines of a
  // cell: the distinct tops of its text's line boxes.
  const LAYOUT = `(() => {
    const scroller = document.scrollingElement;
    const panes = [...document.querySelectorAll('.list-pane, .detail-pane')].map((e) => ({ name: e.className, scroll: e.scrollWidth, client: e.clientWidth }));
    const lines = (node) => {
      const range = document.createRange();
      range.selectNodeContents(node);
      return new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size;
    };
    const rows = [...document.querySelectorAll('#rows tr')].filter((r) => !r.hidden).map((r) => {
      const change = r.querySelector('td.change');
      const fwd = r.querySelector('td.fwd');
      return {
        seq: r.querySelector('td.seq').textContent,
        changeWidth: change.getBoundingClientRect().width,
        lines: lines(change),
        words: change.textContent.split(/\\s+/).filter(Boolean).length,
        fwdText: fwd.textContent,
        fwdCut: fwd.scrollWidth > fwd.clientWidth + 1 || fwd.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5,
      };
    });
    return { scroll: scroller.scrollWidth, client: scroller.clientWidth, panes, rows };
  })()`;

  /**
   * What the layout looks like at the page's width: horizontal overflow of the document and of each pane,
   * and for each visible row the change cell's width, its lines and words, and whether the forward cell is cut.
   */
  function layout(page: Page): Promise<Layout> {
    return page.evaluate<Layout>(LAYOUT);
  }

  async function checkLayout(page: Page, width: number, minChangeWidth: number): Promise<void> {
    await page.setViewportSize({ width, height: width > 800 ? 800 : 844 });
    const l = await layout(page);
    expect(l.scroll, `page width at ${width}`).toBeLessThanOrEqual(l.client);
    for (const p of l.panes) expect(p.scroll, `${p.name} at ${width}`).toBeLessThanOrEqual(p.client);
    expect(l.rows.length).toBeGreaterThan(0);
    for (const r of l.rows) {
      expect(r.changeWidth, `row ${r.seq}'s change cell at ${width}`).toBeGreaterThanOrEqual(minChangeWidth);
      // Wrapped by words: a long text holds several words a line, never one.
      if (r.words >= 12) expect(r.words / r.lines, `words a line in row ${r.seq} at ${width}`).toBeGreaterThanOrEqual(4);
      expect(r.fwdText, `row ${r.seq}'s forward cell`).not.toBe('');
      expect(r.fwdCut, `row ${r.seq}'s forward cell cut at ${width}`).toBe(false);
    }
  }

  function expectPng(path: string): void {
    const png = readFileSync(path);
    expect(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
    expect(png.length).toBeGreaterThan(2000);
  }

  const LONG_ID = `card-${'0123456789abcdef'.repeat(8)}`;
  const LONG_NAME = 'Quarterly planning review for the platform and payments teams, with the notes of every meeting since spring';
  const LONG_URL = `https://docs.example.com/${'segment-without-any-space/'.repeat(12)}end`;
  const LONG_TEXT = 'The customer reports that the export button stays disabled after the upload finishes, even when every field is valid and the network is idle, and asks whether the nightly job could retry it on its own';

  it('shows every forward state, the name beside the id, and no horizontal scroll at 1280 and 390 px with long ids, names, URLs and changes', async () => {
    const app = await heldApp();
    const forwardTo = `${app.url}/hooks/${'a-long-path-to-the-local-app/'.repeat(6)}end`;
    const l = await listen(['--forward-to', forwardTo]);
    const { page } = await open(l.page);
    await deliver(l, { _id: LONG_ID, _rev: 'r1', Name: LONG_NAME, Status: 'Open', Link: LONG_URL });
    // The app holds the first forward: that one is being forwarded, the ones after it wait.
    await rowOf(page, 1).locator('td.fwd', { hasText: /^forwarding$/ }).waitFor();
    await deliver(l, { _id: 'c2', Name: 'Second card', Status: 'Open' });
    await deliver(l, { _id: LONG_ID, Name: LONG_NAME, Status: LONG_TEXT, Link: `${LONG_URL}/changed` });
    await rowOf(page, 3).waitFor();
    expect(await rowOf(page, 2).locator('td.fwd').textContent()).toBe('waiting');
    expect(await rowOf(page, 3).locator('td.fwd').textContent()).toBe('waiting');
    expect(await rowOf(page, 1).locator('td.card .card-name').textContent()).toBe(LONG_NAME);
    expect(await rowOf(page, 1).locator('td.card .card-id').textContent()).toBe(LONG_ID);
    expect(await rowOf(page, 2).locator('td.card').textContent()).toBe('Second cardc2');
    await checkLayout(page, 1280, 200);

    await expect.poll(() => app.held(), { timeout: 60_000 }).toBe(1);
    app.answer(500);
    await rowOf(page, 1).locator('td.fwd.fail', { hasText: /^✗ 500 in [\d.]+ ms$/ }).waitFor();
    expect(await rowOf(page, 2).locator('td.fwd').textContent()).toBe('waiting');
    // The listener tries it again: that try is held too, then answered, and the app answers the rest at once.
    await expect.poll(() => app.held(), { timeout: 60_000 }).toBe(1);
    app.holding = false;
    app.answer(200);
    for (const seq of [1, 2, 3]) await rowOf(page, seq).locator('td.fwd.ok', { hasText: /^✓ 200 in [\d.]+ ms( \(try \d+\))?$/ }).waitFor();
    await app.close();
    await deliver(l, { _id: 'c4', Name: 'Nobody listens', Status: 'Open' });
    await rowOf(page, 4).locator('td.fwd.fail', { hasText: /^✗ ECONNREFUSED/ }).waitFor();

    // The detail: the request beside the app's answer, its status, headers and body.
    await rowOf(page, 3).click();
    const answer = page.locator('#detail .app-answer');
    await answer.locator('.status-line', { hasText: '✓ 200' }).waitFor();
    expect(await answer.locator('table.answer-headers').textContent()).toContain('x-appyes');
    expect(await answer.locator('pre.answer-body').textContent()).toBe('{\n  "app": "answer",\n  "status": 200\n}');
    expect(await page.locator('#detail table.changes').textContent()).toContain(LONG_TEXT);

    const dir = process.env.CARDBOARD_SCREENSHOT_DIR ?? tempDir();
    await checkLayout(page, 1280, 200);
    const [req, ans] = [await page.locator('#detail .request').boundingBox(), await answer.boundingBox()];
    expect(ans!.x).toBeGreaterThan(req!.x + req!.width - 1);
    expect(Math.abs(ans!.y - req!.y)).toBeLessThan(2);
    await page.screenshot({ path: join(dir, 'cardboard-inspector-forwards-1280.png'), fullPage: true });
    if (process.env.CARDBOARD_SCREENSHOT_DIR) {
      await page.locator('#detail .exchange').scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(dir, 'cardboard-inspector-exchange-1280.png') });
    }
    expectPng(join(dir, 'cardboard-inspector-forwards-1280.png'));

    await checkLayout(page, 390, 300);
    const [req2, ans2] = [await page.locator('#detail .request').boundingBox(), await answer.boundingBox()];
    expect(ans2!.y).toBeGreaterThanOrEqual(req2!.y + req2!.height - 1);
    await page.screenshot({ path: join(dir, 'cardboard-inspector-forwards-390.png'), fullPage: true });
    expectPng(join(dir, 'cardboard-inspector-forwards-390.png'));
    // The first screen of it, at its size, for a person to look at.
    if (process.env.CARDBOARD_SCREENSHOT_DIR) await page.screenshot({ path: join(dir, 'cardboard-inspector-forwards-390-top.png') });
  });

  /** argv as bash reads `text` with `curl` a function printing its arguments, NUL-separated (nothing is sent). */
  function curlArgs(text: string, env: Record<string, string>): string[] {
    const out = execFileSync('bash', ['-c', `curl() { printf '%s\\0' "$@"; }\n${text}`], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env } });
    return out.toString('utf8').split('\0').slice(0, -1);
  }

  it('edits a delivery and replays it to a typed URL with the edited bytes and the key; hostile values stay text in the editor and in the copy as curl', async () => {
    const receiver = await heldApp();
    receiver.holding = false;
    const dir = tempDir();
    const marker = join(dir, 'pwned');
    const hostile = `${IMG} it's "quoted" $(touch ${marker}) \`touch ${marker}\` ; touch ${marker} '\\'' ${SCRIPT}\nsecond line`;
    const l = await listen();
    const { page, dialogs } = await open(l.page);
    await deliver(l, { _id: 'h1', Name: hostile, Status: 'Open' }, { 'x-note': `it's $(touch ${marker}) \`x\` "q"` });
    await rowOf(page, 1).click();
    await page.click('#detail button.edit');
    const headersArea = page.locator('#edit-headers');
    const bodyArea = page.locator('#edit-body');
    await bodyArea.waitFor();
    // The editor holds the values as text; the key and the length are the listener's to set.
    expect(JSON.parse(await bodyArea.inputValue())).toEqual({ _id: 'h1', Name: hostile, Status: 'Open' });
    const headerLines = (await headersArea.inputValue()).split('\n');
    expect(headerLines).toContain(`x-note: it's $(touch ${marker}) \`x\` "q"`);
    expect(headerLines.some((h) => /^(x-signingkey|content-length|host):/i.test(h))).toBe(false);

    // A JSON body that does not parse is refused in the page, saying where; nothing is sent.
    await page.fill('#replay-url', `${receiver.url}/edited`);
    await bodyArea.fill('{"_id": "h1",\n "Status": "Done",,\n}');
    await page.click('#detail .editor button.send');
    const error = page.locator('#detail .edit-error');
    await error.waitFor();
    expect(await error.textContent()).toBe('Body is not valid JSON (line 2, column 19): Expected double-quoted property name in JSON at position 32. Fix it, or change the content-type header.');
    expect(receiver.got).toHaveLength(0);

    const edited = JSON.stringify({ _id: 'h1', Name: hostile, Status: 'Done' });
    await bodyArea.fill(edited);
    await headersArea.fill(`${await headersArea.inputValue()}\nx-edited: it's $(touch ${marker})`);
    await page.click('#detail .editor button.send');
    await page.locator('#detail .answer', { hasText: `${receiver.url}/edited: 200 in` }).waitFor();
    expect(await page.locator('#detail .answer').textContent()).toContain('(edited)');
    expect(await page.locator('#detail .answer pre.answer-body').textContent()).toBe('{"app":"answer","status":200}');
    expect(receiver.got).toHaveLength(1);
    expect(receiver.got[0]!.body.toString('utf8')).toBe(edited);
    expect(receiver.got[0]!.headers['x-signingkey']).toBe(KEY);
    expect(receiver.got[0]!.headers['x-edited']).toBe(`it's $(touch ${marker})`);
    expect(receiver.got[0]!.headers['x-note']).toBe(`it's $(touch ${marker}) \`x\` "q"`);

    // Copy as curl: every value one shell word, exactly; the key read from the environment, never written.
    await page.click('#detail button.copy-curl');
    const curl = await page.locator('#detail textarea.curl-text').inputValue();
    expect(curl).not.toContain(KEY);
    expect(curl).toContain('$CARDBOARD_SIGNING_KEY');
    const args = curlArgs(curl, { CARDBOARD_SIGNING_KEY: 'key-from-env' });
    expect(args.slice(0, 3)).toEqual(['-X', 'POST', `${receiver.url}/edited`]);
    expect(args.at(-2)).toBe('--data-raw');
    expect(args.at(-1)).toBe(edited);
    const sent = args.filter((_, i) => args[i - 1] === '-H');
    expect(sent).toContain(`x-note: it's $(touch ${marker}) \`x\` "q"`);
    expect(sent).toContain(`x-edited: it's $(touch ${marker})`);
    expect(sent.at(-1)).toBe('x-signingKey: key-from-env');
    expect(existsSync(marker)).toBe(false);

    // The editor, the answer and the command fit a phone's width too.
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 844 });
      const l = await layout(page);
      expect(l.scroll, `page width at ${width}`).toBeLessThanOrEqual(l.client);
      for (const p of l.panes) expect(p.scroll, `${p.name} at ${width}`).toBeLessThanOrEqual(p.client);
      if (process.env.CARDBOARD_SCREENSHOT_DIR) await page.screenshot({ path: join(shots, `cardboard-inspector-editor-${width}.png`), fullPage: true });
    }

    expect(await page.evaluate<unknown>('window.__pwned')).toBeUndefined();
    expect(await page.evaluate<number>("document.querySelectorAll('img, script:not([src])').length")).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it('copies as curl a body that starts with @ as that text: curl, run, sends it and reads no file', async () => {
    const receiver = await heldApp();
    receiver.holding = false;
    const secretFile = join(tempDir(), 'private.txt');
    writeFileSync(secretFile, 'contents of a private file');
    const l = await listen();
    const { page } = await open(l.page);
    const res = await fetch(l.url, { method: 'POST', headers: { 'content-type': 'text/plain', 'x-signingKey': KEY }, body: `@${secretFile}` });
    expect(res.status).toBe(200);
    await rowOf(page, 1).click();
    await page.click('#detail button.copy-curl');
    const curl = await page.locator('#detail textarea.curl-text').inputValue();
    // Run for real (the receiver is in this process: not a sync call, which would hold it).
    await promisify(execFile)('bash', ['-c', curl.replace(/^curl /, 'curl -sS -o /dev/null --max-time 10 ')], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', CARDBOARD_SIGNING_KEY: KEY, WEBHOOK_URL: receiver.url } });
    expect(receiver.got).toHaveLength(1);
    expect(receiver.got[0]!.body.toString('utf8')).toBe(`@${secretFile}`);
  });

  it('keeps a page opened before a restart working after it with the same --record: it reconnects by itself, says so, and shows no entry twice', async () => {
    const record = join(tempDir(), 'hooks.jsonl');
    // A free port for the page, named on both runs.
    const probe = await startLocalServer(() => {});
    const port = Number(new URL(probe.url).port);
    await probe.close();
    const args = ['--inspect', String(port), '--record', record];
    const start = async (runArgs = args) => {
      const l = await startListener(runArgs, { env: { CARDBOARD_SIGNING_KEY: KEY } });
      cleanup.push(async () => {
        if (l.child.exitCode === null) await l.stop('SIGKILL');
      });
      await l.waitFor(/Inspector: (\S+)/);
      return { ...l, page: /Inspector: (\S+)/.exec(l.stderr())![1]! };
    };
    const first = await start();
    const { page } = await open(first.page);
    await deliver(first, { _id: 'r1', Name: 'Before the restart', Status: 'Open' });
    await deliver(first, { _id: 'r2', Name: 'Also before', Status: 'Open' });
    await rowOf(page, 2).waitFor();
    await first.stop('SIGTERM');
    await page.locator('#status', { hasText: 'reconnecting…' }).waitFor();

    const second = await start();
    expect(second.page).toBe(first.page);
    await page.locator('#status', { hasText: 'reconnected' }).waitFor();
    await deliver(second, { _id: 'r1', Name: 'Before the restart', Status: 'Done' });
    await rowOf(page, 3).locator('td.change', { hasText: 'Status: Open → Done' }).waitFor();
    expect(await page.locator('#rows tr').count()).toBe(3);
    expect(await page.locator('#rows td.seq').allTextContents()).toEqual(['#3', '#2', '#1']);
    // The page's actions use the same token: its detail loads.
    await rowOf(page, 1).click();
    await page.locator('#detail h2', { hasText: '#1 · POST' }).waitFor();

    // Restarted without --record the token is new: the page says so instead of retrying in silence.
    await second.stop('SIGTERM');
    const third = await start(['--inspect', String(port)]);
    expect(third.page).not.toBe(first.page);
    await page.locator('#status', { hasText: "this page's token is no longer the listener's" }).waitFor();
    expect(await page.locator('#rows tr').count()).toBe(3);
  });
});
