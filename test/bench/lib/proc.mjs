// Child processes for the benchmark: wall time, peak RSS and output of one run, and the statistics over runs.
import { spawn } from 'node:child_process';
import { existsSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export { median, sig } from './stats.mjs';

/** The built CLI entry point, as a user runs it. */
export const BIN = fileURLToPath(new URL('../../../bin/cardboard.js', import.meta.url));
/** This tree's CLI as a client of the scenarios (the ref's comes from lib/ref.mjs). */
export const SELF = { label: 'cardboard', short: 'cardboard', bin: BIN, isRef: false };

/** The ref's CLI refused a flag or command this tree has: its figure is "not in <ref>", not a failure. */
export class NotInRef extends Error {
  constructor(client, args, stderr) {
    super(`${client.label} has no \`${args.slice(0, 2).join(' ')}\` as used here: ${stderr.trim().split('\n')[0]}`);
    this.client = client;
  }
}

/** Whether a failed run of the ref is its CLI rejecting a flag or command it does not have (usage error, exit 2). */
export const isMissingFeature = (client, r) => client?.isRef === true && r.code === 2 && /unknown (option|command)|too many arguments/i.test(r.stderr);
/** Where generated inputs and journals go (gitignored). */
export const OUT = fileURLToPath(new URL('../out/', import.meta.url));

const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

/** Environment of a measured child: no inherited CARDBOARD_*, CI on (no prompts, no spinner), colour off. */
export function childEnv(extra = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('CARDBOARD_')) env[k] = v;
  return { ...env, CI: '1', NO_COLOR: '1', ...extra };
}

/** Read VmHWM (peak resident set, kB) of a live process; undefined once it is gone. */
function vmHwm(pid) {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Run `cmd args` to the end. Returns { code, ms, rssKb, cpuMs, stdout, stderr }: wall time from spawn to
 * exit, peak RSS of the command itself (GNU time's %M, else polled VmHWM), its CPU time (user + system;
 * only with GNU time), and its output unless sent to a file.
 * opts: env, stdoutFile ('/dev/null' or a path: written there, not kept), rss (measure peak RSS), signal (an
 * AbortSignal: when it fires the command gets SIGTERM, and the result says stopped: true).
 */
export function runMeasured(cmd, args, opts = {}) {
  const timeFile = join(tmpdir(), `cardboard-bench-time-${process.pid}-${Math.random().toString(36).slice(2)}`);
  const wrap = opts.rss && GNU_TIME;
  const file = wrap ? GNU_TIME : cmd;
  const argv = wrap ? ['-o', timeFile, '-f', '%M %U %S', cmd, ...args] : args;
  const outFd = opts.stdoutFile ? openSync(opts.stdoutFile, 'w') : undefined;
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(file, argv, { env: opts.env ?? childEnv(), stdio: ['ignore', outFd ?? 'pipe', 'pipe'] });
    const out = [];
    const err = [];
    child.stdout?.on('data', (b) => out.push(b));
    child.stderr.on('data', (b) => err.push(b));
    let stopped = false;
    const stop = () => {
      stopped = true;
      child.kill('SIGTERM');
    };
    if (opts.signal?.aborted) stop();
    else opts.signal?.addEventListener('abort', stop, { once: true });
    let polled = 0;
    const poll = opts.rss && !wrap ? setInterval(() => (polled = Math.max(polled, vmHwm(child.pid) ?? 0)), 20) : undefined;
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      opts.signal?.removeEventListener('abort', stop);
      if (poll) clearInterval(poll);
      if (outFd !== undefined) closeSync(outFd);
      let rssKb = opts.rss ? polled : undefined;
      let cpuMs;
      if (wrap) {
        // GNU time writes "Command exited with non-zero status N" before the figures when the command fails.
        const [kb, user, sys] = readFileSync(timeFile, 'utf8').trim().split('\n').at(-1).split(' ').map(Number);
        rssKb = kb;
        cpuMs = (user + sys) * 1000;
        rmSync(timeFile, { force: true });
      }
      resolve({ code, stopped, ms, rssKb, cpuMs, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
  });
}

/**
 * Run a CLI (node [opts.nodeArgs] <client's bin/cardboard.js> …args) measured; throws with its stderr when it
 * fails, and NotInRef when the ref's CLI rejects the flags (see isMissingFeature). opts.client: { label, bin }
 * (default this tree's); opts.node: another Node binary than the one running the bench.
 */
export async function runCli(args, opts = {}) {
  const client = opts.client ?? SELF;
  const r = await runMeasured(opts.node ?? process.execPath, [...(opts.nodeArgs ?? []), client.bin, ...args], opts);
  if (isMissingFeature(client, r)) throw new NotInRef(client, args, r.stderr);
  if (r.code !== 0 && !opts.allowFailure && !r.stopped) throw new Error(`${client.label} ${args.join(' ')} exited ${r.code}: ${r.stderr.slice(-2000)}`);
  return r;
}

/** Log a progress line on stderr (the table is the only thing on stdout). */
export function log(line) {
  process.stderr.write(`[bench] ${line}\n`);
}
