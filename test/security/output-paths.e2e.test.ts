// The built binary against paths that are not cardboard's to change: a user's file behind /dev/stdout keeps
// its mode and gets the results; a FIFO with no reader is refused at once (exit 2, nothing sent) instead of
// hanging; one with a reader gets the rows; a --record file holding something else is refused untouched.
import { spawn } from 'node:child_process';
import { chmodSync, closeSync, existsSync, openSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, childEnv, type CliResult, runCli, tempDir } from '../helpers/cli.js';
import { BOARD_ID, type RunningEmulator, startTestEmulator, TOKEN } from '../helpers/emulator.js';
import { holdReader, makeFifo } from '../helpers/fifo.js';

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startTestEmulator();
});
afterAll(async () => {
  await emu.close();
});

const env = () => ({ CARDBOARD_BASE_URL: emu.url, CARDBOARD_BOARD: BOARD_ID, CARDBOARD_TOKEN: TOKEN });
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
const posts = () => emu.requests().filter((q) => q.method === 'POST').length;
/** A hang is killed after this (a budget for hangs only: the runs here end in well under a second when quiet). */
const HANG_MS = 30_000;

function input(dir: string, prefix: string): string {
  const path = join(dir, 'in.csv');
  writeFileSync(path, `Name,Status\n${prefix}-a,Open\n${prefix}-b,Open\n`);
  return path;
}

/** Run the binary with its stdout on `fd` (a file the test opened, as the shell does for `> out.txt`). */
function runToFd(args: string[], fd: number, cwd: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: childEnv({ env: env() }), stdio: ['ignore', fd, 'pipe'] });
    const err: Buffer[] = [];
    child.stderr?.on('data', (b: Buffer) => err.push(b));
    const timer = setTimeout(() => child.kill('SIGKILL'), HANG_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: '', stderr: Buffer.concat(err).toString('utf8') });
    });
  });
}

describe('import --results on paths that are not cardboard files', () => {
  it('--results /dev/stdout with stdout redirected to a 0644 file: the file keeps 0644 and holds the results', async () => {
    const dir = tempDir();
    const out = join(dir, 'out.txt');
    writeFileSync(out, '');
    chmodSync(out, 0o644);
    const fd = openSync(out, 'w');
    let r: CliResult;
    try {
      r = await runToFd(['import', input(dir, 'stdout-mode'), '--results', '/dev/stdout'], fd, dir);
    } finally {
      closeSync(fd);
    }
    expect(r.code, r.stderr).toBe(0);
    expect(mode(out)).toBe('644');
    const text = readFileSync(out, 'utf8');
    expect(text).toMatch(/^line,state,_id,message,settled\r\n/);
    expect(text).toMatch(/\r\n2,created,/);
    expect(text).toMatch(/\r\n3,created,/);
  });

  it('--results FIFO with no reader: exit 2 at once naming the flag and path, nothing sent, mode kept', async () => {
    const dir = tempDir();
    const fifo = makeFifo(dir, 'results.fifo');
    const before = posts();
    const r = await runCli(['import', input(dir, 'fifo-none'), '--results', fifo], { env: env(), cwd: dir, timeoutMs: HANG_MS });
    expect(r.signal, 'killed: it hung on the FIFO').toBeNull();
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`--results ${fifo} is a FIFO with no reader: start its reader first`);
    expect(posts()).toBe(before);
    expect(mode(fifo)).toBe('644');
  });

  it('--rejects through a symlink to a FIFO with no reader: the same refusal, naming --rejects', async () => {
    const dir = tempDir();
    const fifo = makeFifo(dir, 'rejects.fifo');
    const link = join(dir, 'rejects.csv');
    symlinkSync(fifo, link);
    const r = await runCli(['import', input(dir, 'fifo-link'), '--rejects', link], { env: env(), cwd: dir, timeoutMs: HANG_MS });
    expect(r.signal).toBeNull();
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`--rejects ${link} is a FIFO with no reader`);
  });

  it('--results FIFO with a reader (another process): the reader gets every row', async () => {
    const dir = tempDir();
    const fifo = makeFifo(dir, 'results.fifo');
    const got = join(dir, 'got.csv');
    const reader = spawn('sh', ['-c', 'cat "$1" >"$2"', 'sh', fifo, got], { stdio: 'ignore' });
    const ended = new Promise<number | null>((resolve) => reader.on('close', resolve));
    // Held open until cardboard has run: the reader sees the end only after cardboard closes the FIFO.
    const holder = await holdReader(fifo);
    let r: CliResult;
    try {
      r = await runCli(['import', input(dir, 'fifo-read'), '--results', fifo], { env: env(), cwd: dir, timeoutMs: HANG_MS });
    } finally {
      closeSync(holder);
    }
    expect(r.code, r.stderr).toBe(0);
    expect(await ended).toBe(0);
    const lines = readFileSync(got, 'utf8').split('\r\n');
    expect(lines[0]).toBe('line,state,_id,message,settled');
    // Rows are written as they finish, in any order.
    expect(lines.slice(1, 3).map((l) => l.split(',').slice(0, 2).join(',')).sort()).toEqual(['2,created', '3,created']);
    expect(mode(fifo)).toBe('644');
  });
});

describe('webhook listen --record on a file that is not a record', () => {
  const listen = (record: string, cwd: string) =>
    runCli(['webhook', 'listen', '--port', '0', '--no-verify', '--record', record], { env: env(), cwd, timeoutMs: HANG_MS });

  it('notes.txt (other content): exit 2 naming --record; the file is byte-identical, mode kept, no lock beside it', async () => {
    const dir = tempDir();
    const notes = join(dir, 'notes.txt');
    const content = Buffer.from('shopping list\n- milk\n\u00e9t\u00e9 \x00\xff\n');
    writeFileSync(notes, content);
    chmodSync(notes, 0o644);
    const r = await listen(notes, dir);
    expect(r.signal, 'killed: it listened').toBeNull();
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`--record ${notes} is not a record file`);
    expect(readFileSync(notes)).toEqual(content);
    expect(mode(notes)).toBe('644');
    expect(existsSync(`${notes}.lock`)).toBe(false);
  });

  it('a symlink to such a file: refused the same way, the target untouched', async () => {
    const dir = tempDir();
    const target = join(dir, 'data.jsonl');
    const content = '{"id":1,"name":"not a delivery"}\n';
    writeFileSync(target, content);
    chmodSync(target, 0o644);
    const link = join(dir, 'hooks.jsonl');
    symlinkSync(target, link);
    const r = await listen(link, dir);
    expect(r.signal).toBeNull();
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`--record ${link} is not a record file`);
    expect(readFileSync(target, 'utf8')).toBe(content);
    expect(mode(target)).toBe('644');
    expect(readdirSync(dir).sort()).toEqual(['data.jsonl', 'hooks.jsonl']);
  });
});
