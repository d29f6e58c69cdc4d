// A pasteable `cardboard import ...` command line rebuilt from the run's plan:
// every hint that suggests a command repeats the user's board, base URL, rate, outputs and mapping, so
// pasting it never imports into another board or for real instead of a dry run. Secrets never appear:
// the token and signing key have no flag, and a base URL loses any user:password.
import type { GlobalOptions } from '../../context.js';
import { shellQuote } from '../../import/mapping.js';
import type { ImportPlan } from '../../import/plan.js';
import { parseDuration } from '../../units.js';
import { DEFAULT_MAX_AGE_MS } from '../../mirror/fresh.js';
import { DEFAULT_CONCURRENCY, DEFAULT_GIVE_UP_AFTER } from './plan-from-flags.js';

/** What a hint changes in the user's command; `null` drops an output flag. */
interface CommandOverrides {
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
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString().replace(/\/$/, url.endsWith('/') ? '/' : '');
  } catch {
    return url.replace(/\/\/[^/@]*@/, '//');
  }
}

/** Every word of the command, unquoted: the global options that matter, then the import's own (--restart never). */
function importCommandWords(plan: ImportPlan, globals: GlobalOptions, over: CommandOverrides = {}): string[] {
  const { source, mapping, key, outputs, policy } = plan;
  const words: string[] = ['cardboard'];
  if (globals.board !== undefined) words.push('-b', globals.board);
  if (globals.baseUrl !== undefined) words.push('--base-url', safeUrl(globals.baseUrl));
  if (globals.rate !== undefined) words.push('--rate', rateText(globals.rate));
  if (globals.timeout !== undefined) words.push('--timeout', globals.timeout.text);
  if (globals.insecure) words.push('--insecure');
  words.push('import', over.file ?? source.file);
  for (const [header, field] of Object.entries(mapping.map)) words.push('--map', `${header}=${field}`);
  if (mapping.mapFile !== undefined) words.push('--map-file', mapping.mapFile);
  for (const h of mapping.skipColumns) words.push('--skip-column', h);
  const matchOn = over.matchOn ?? key.matchOn;
  if (matchOn !== undefined) words.push('--match-on', matchOn);
  if (key.mirror !== undefined) words.push('--mirror');
  if (key.mirror !== undefined && key.mirror.maxAgeMs !== DEFAULT_MAX_AGE_MS) words.push('--max-age', durationText(key.mirror.maxAgeMs));
  if (key.idColumn !== undefined) words.push('--id-column', key.idColumn);
  if (source.formatGiven !== undefined) words.push('--input-format', source.formatGiven);
  for (const [field, type] of plan.types) words.push('--type', `${field}=${type}`);
  if (source.delimiter !== undefined) words.push('--delimiter', source.delimiter);
  if (source.encoding !== undefined) words.push('--encoding', source.encoding);
  if (policy.sendEmpty) words.push('--empty', 'send');
  if (mapping.allowUnknown) words.push('--allow-unknown');
  if (policy.force) words.push('--force');
  if (policy.concurrency !== DEFAULT_CONCURRENCY) words.push('--concurrency', String(policy.concurrency));
  if (policy.giveUpAfterMs !== parseDuration(DEFAULT_GIVE_UP_AFTER, '--give-up-after')) words.push('--give-up-after', durationText(policy.giveUpAfterMs));
  // Another input has another journal: --journal is repeated only for the same input.
  if (outputs.journal !== undefined && over.file === undefined) words.push('--journal', outputs.journal);
  const results = over.results === undefined ? outputs.results : (over.results ?? undefined);
  const rejects = over.rejects === undefined ? outputs.rejects : (over.rejects ?? undefined);
  if (results !== undefined) words.push('--results', results);
  if (rejects !== undefined) words.push('--rejects', rejects);
  if (policy.dryRun) words.push('--dry-run');
  if (outputs.json) words.push('--json');
  words.push(...(over.extra ?? []));
  return words;
}

/** The command line, every word shell-quoted, ready to paste. */
export function importCommandLine(plan: ImportPlan, globals: GlobalOptions, over: CommandOverrides = {}): string {
  return importCommandWords(plan, globals, over).map(shellQuote).join(' ');
}

/** A sibling name for the next run's output: `fix.csv` → `fix.2.csv`, `fix.2.csv` → `fix.3.csv`. */
export function nextOutputName(path: string): string {
  const m = /^(.*?)(?:\.(\d+))?(\.[^./\\]*)?$/.exec(path)!;
  const n = m[2] === undefined ? 2 : Number(m[2]) + 1;
  return `${m[1]}.${n}${m[3] ?? ''}`;
}
