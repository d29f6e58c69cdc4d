// A pasteable `cardboard import ...` command line rebuilt from the run's own options (issue 10, point 4):
// every hint that suggests a command repeats the user's board, base URL, rate, outputs and mapping, so
// pasting it never imports into another board or for real instead of a dry run. Secrets never appear:
// the token and signing key have no flag, and a base URL loses any user:password.
import type { GlobalOptions } from '../context.js';
import type { ImportOptions } from '../commands/import/options.js';
import { shellQuote } from './mapping.js';

/** What a hint changes in the user's command; `null` drops an output flag. */
export interface CommandOverrides {
  file?: string;
  results?: string | null;
  rejects?: string | null;
  matchOn?: string;
  /** Flags added at the end, already split into words (e.g. ['--map', 'A=B']). */
  extra?: string[];
}

/** A rate in requests per second, written as a whole number per second, minute or hour when one exists. */
function rateText(perSecond: number): string {
  for (const [unit, s] of [['s', 1], ['min', 60], ['h', 3600]] as const) {
    const n = perSecond * s;
    if (Math.abs(n - Math.round(n)) < 1e-9) return `${Math.round(n)}/${unit}`;
  }
  return `${perSecond}/s`;
}

/** A duration in milliseconds as --timeout and --give-up-after read it, in the largest whole unit. */
function durationText(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** A base URL without credentials: `https://user:pass@host` never reaches a printed hint. */
function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/$/, url.endsWith('/') ? '/' : '');
  } catch {
    return url.replace(/\/\/[^/@]*@/, '//');
  }
}

/** Every word of the command, unquoted: the global options that matter, then the import's own. */
export function importCommandWords(opts: ImportOptions, globals: GlobalOptions, over: CommandOverrides = {}): string[] {
  const w: string[] = ['cardboard'];
  if (globals.board !== undefined) w.push('-b', globals.board);
  if (globals.baseUrl !== undefined) w.push('--base-url', safeUrl(globals.baseUrl));
  if (globals.rate !== undefined) w.push('--rate', rateText(globals.rate));
  if (globals.timeout !== undefined) w.push('--timeout', globals.timeout.text);
  if (globals.insecure) w.push('--insecure');
  w.push('import', over.file ?? opts.file);
  for (const [header, field] of Object.entries(opts.map)) w.push('--map', `${header}=${field}`);
  if (opts.mapFile !== undefined) w.push('--map-file', opts.mapFile);
  for (const h of opts.skipColumns) w.push('--skip-column', h);
  const matchOn = over.matchOn ?? opts.matchOn;
  if (matchOn !== undefined) w.push('--match-on', matchOn);
  if (opts.idColumn !== undefined) w.push('--id-column', opts.idColumn);
  if (opts.inputFormat !== undefined) w.push('--input-format', opts.inputFormat);
  for (const [field, type] of opts.types) w.push('--type', `${field}=${type}`);
  if (opts.delimiter !== undefined) w.push('--delimiter', opts.delimiter);
  if (opts.encoding !== undefined) w.push('--encoding', opts.encoding);
  if (opts.sendEmpty) w.push('--empty', 'send');
  if (opts.allowUnknown) w.push('--allow-unknown');
  if (opts.force) w.push('--force');
  if (opts.concurrency !== 8) w.push('--concurrency', String(opts.concurrency));
  if (opts.giveUpAfterMs !== 15 * 60_000) w.push('--give-up-after', durationText(opts.giveUpAfterMs));
  // Another input has another journal: --journal is repeated only for the same input.
  if (opts.journal !== undefined && over.file === undefined) w.push('--journal', opts.journal);
  const results = over.results === undefined ? opts.results : (over.results ?? undefined);
  const rejects = over.rejects === undefined ? opts.rejects : (over.rejects ?? undefined);
  if (results !== undefined) w.push('--results', results);
  if (rejects !== undefined) w.push('--rejects', rejects);
  if (opts.dryRun) w.push('--dry-run');
  if (opts.json) w.push('--json');
  w.push(...(over.extra ?? []));
  return w;
}

/** The command line, every word shell-quoted, ready to paste. */
export function importCommandLine(opts: ImportOptions, globals: GlobalOptions, over: CommandOverrides = {}): string {
  return importCommandWords(opts, globals, over).map(shellQuote).join(' ');
}

/** A sibling name for the next run's output: `fix.csv` → `fix.2.csv`, `fix.2.csv` → `fix.3.csv`. */
export function nextOutputName(path: string): string {
  const m = /^(.*?)(?:\.(\d+))?(\.[^./\\]*)?$/.exec(path)!;
  const n = m[2] === undefined ? 2 : Number(m[2]) + 1;
  return `${m[1]}.${n}${m[3] ?? ''}`;
}
