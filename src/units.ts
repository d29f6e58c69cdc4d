import { UsageError } from './errors.js';

// The one grammar for durations, rates, sizes and ports, used by every flag of every command and the
// emulator. Durations and rates always carry their unit: a bare `--timeout 30` or
// `--rate 2` is refused with a hint, because the earlier grammars read a bare number differently
// (seconds in one place, per minute in another) and no documented example relies on either reading.

/**
 * The longest duration accepted, 2^31-1 ms (about 24.8 days): Node keeps timers in a signed 32-bit
 * count of milliseconds, and a longer setTimeout (or undici timeout) fires after 1 ms instead.
 */
export const MAX_DURATION_MS = 2 ** 31 - 1;

const DURATION_EXAMPLES = 'e.g. 500ms, 30s, 2m, 1h or 1h30m';
const DURATION_UNITS = new Map<string, { ms: number; rank: number }>([
  ['h', { ms: 3_600_000, rank: 4 }],
  ['m', { ms: 60_000, rank: 3 }],
  ['min', { ms: 60_000, rank: 3 }],
  ['s', { ms: 1000, rank: 2 }],
  ['sec', { ms: 1000, rank: 2 }],
  ['ms', { ms: 1, rank: 1 }],
]);
const RATE_UNITS = new Map<string, number>([
  ['s', 1], ['sec', 1], ['second', 1],
  ['m', 60], ['min', 60], ['minute', 60],
  ['h', 3600], ['hour', 3600],
]);
const SIZE_UNITS = new Map<string, number>([
  ['', 1], ['b', 1], ['k', 1024], ['kb', 1024], ['m', 1024 ** 2], ['mb', 1024 ** 2], ['g', 1024 ** 3], ['gb', 1024 ** 3],
]);
const NUMBER = /^\d+(?:\.\d+)?$/;

/** A user's value inside a message: quoted and escaped, so control characters reach no terminal. */
function shown(text: string): string {
  return JSON.stringify(text);
}

/**
 * Named durations as an environment variable takes them (`idle=10s,headers=15s`): each name mapped to its
 * field by `names`, each value read by parseDuration. A name not in `names` is a UsageError naming the
 * variable, the `kind` of thing it names and the names it knows, with `example`.
 */
export function parseDurationList<K extends string>(value: string | undefined, variable: string, names: ReadonlyMap<string, K>, kind: string, example: string): Map<K, number> {
  const out = new Map<K, number>();
  for (const part of (value ?? '').split(',').filter((p) => p.trim() !== '')) {
    const [name = '', duration = ''] = part.split('=', 2).map((s) => s.trim());
    const key = names.get(name);
    if (key === undefined) throw new UsageError(`${variable}: unknown ${kind} "${name}"`, { hint: `Use ${[...names.keys()].join('=, ')}=, e.g. ${example}.` });
    out.set(key, parseDuration(duration, `${variable} ${name}`));
  }
  return out;
}

/**
 * Parse a duration into whole milliseconds: `500ms`, `30s`, `2m` or `2min`, `1h`, decimals (`1.5s`)
 * and compounds from the largest unit down (`1h30m`, `1m30s`, `2s500ms`); units are case-insensitive.
 * A bare number is refused (it has no unit), and so are 0 and anything above MAX_DURATION_MS.
 */
export function parseDuration(text: string, flag: string): number {
  const trimmed = text.trim();
  if (NUMBER.test(trimmed)) {
    throw new UsageError(`${flag} ${trimmed} has no unit`, { hint: `Write ${trimmed}s for seconds, ${trimmed}m for minutes or ${trimmed}ms.` });
  }
  const segment = /(\d+(?:\.\d+)?)\s*(ms|min|sec|h|m|s)(?![a-z])\s*/iy;
  let total = 0;
  let lastRank = Infinity;
  let at = 0;
  while (at < trimmed.length) {
    segment.lastIndex = at;
    const m = segment.exec(trimmed);
    const unit = m ? DURATION_UNITS.get(m[2]!.toLowerCase())! : undefined;
    // Each unit once, largest first: `30m1h` or `1m2m` is more likely a typo than a sum.
    if (!m || !unit || unit.rank >= lastRank) {
      throw new UsageError(`${flag} ${shown(text)} is not a duration`, { hint: `Write a number and a unit (ms, s, m, h), ${DURATION_EXAMPLES}.` });
    }
    total += Number(m[1]) * unit.ms;
    lastRank = unit.rank;
    at = segment.lastIndex;
  }
  if (at === 0) throw new UsageError(`${flag} ${shown(text)} is not a duration`, { hint: `Write a number and a unit, ${DURATION_EXAMPLES}.` });
  const ms = Math.round(total);
  if (ms < 1) throw new UsageError(`${flag} ${trimmed} must be at least 1ms`, { hint: `Give a longer time, ${DURATION_EXAMPLES}.` });
  if (ms > MAX_DURATION_MS) {
    throw new UsageError(`${flag} ${trimmed} is too long: the limit is 24 days (${formatDuration(MAX_DURATION_MS)})`, { hint: `Node's timers cannot wait longer; ${DURATION_EXAMPLES}.` });
  }
  return ms;
}

/**
 * A duration as parsed, with the text it was read from: timers use `ms`, messages show `text`, so a user who
 * wrote `--forward-timeout 90s` reads `90s` back, not `1m30s` or `90000 ms`.
 */
export interface Duration {
  ms: number;
  text: string;
}

/** Parse a duration (parseDuration's grammar and checks) and keep the text as the user wrote it, trimmed. */
export function readDuration(text: string, flag: string): Duration {
  return { ms: parseDuration(text, flag), text: text.trim() };
}

/** A duration known only in milliseconds (a default, a computed wait), with formatDuration's text. */
export function durationOf(ms: number): Duration {
  return { ms, text: formatDuration(ms) };
}

/**
 * A duration for people: a Duration as the user wrote it; milliseconds in the grammar parseDuration reads
 * back: `500ms`, `30s`, `1.5s`, `1m30s`, `1h30m`.
 */
export function formatDuration(value: number | Duration): string {
  if (typeof value !== 'number') return value.text;
  const whole = Math.round(value);
  if (whole < 1000) return `${whole}ms`;
  const h = Math.floor(whole / 3_600_000);
  const m = Math.floor((whole % 3_600_000) / 60_000);
  const rest = whole % 60_000;
  let out = (h > 0 ? `${h}h` : '') + (m > 0 ? `${m}m` : '');
  if (rest >= 1000) out += `${rest / 1000}s`;
  else if (rest > 0) out += `${rest}ms`;
  return out;
}

/**
 * Parse a rate into requests per second: `2/s`, `120/min`, `7200/h` (also `/sec`, `/second`, `/m`,
 * `/minute`, `/hour`). A bare number is refused: per second and per minute both have had users.
 * The slowest rate accepted is one request per MAX_DURATION_MS, since the gap must fit a timer.
 */
export function parseRate(text: string, flag: string): number {
  const trimmed = text.trim();
  if (NUMBER.test(trimmed)) {
    throw new UsageError(`${flag} ${trimmed} is ambiguous: write ${trimmed}/s or ${trimmed}/min`);
  }
  const m = /^(\d+(?:\.\d+)?)\s*\/\s*([a-z]+)$/i.exec(trimmed);
  const seconds = m ? RATE_UNITS.get(m[2]!.toLowerCase()) : undefined;
  if (!m || seconds === undefined) {
    throw new UsageError(`${flag} ${shown(text)} is not a rate`, { hint: 'Write requests per unit of time, e.g. 2/s, 120/min or 7200/h.' });
  }
  const perSecond = Number(m[1]) / seconds;
  if (!(perSecond > 0)) throw new UsageError(`${flag} ${trimmed} must be more than 0`, { hint: 'Give a rate above 0, e.g. 1/s or 10/min.' });
  if (!Number.isFinite(perSecond)) throw new UsageError(`${flag} ${trimmed} is too large`, { hint: 'Give a rate such as 100/s.' });
  if (1000 / perSecond > MAX_DURATION_MS) {
    throw new UsageError(`${flag} ${trimmed} is too slow: the gap between requests must fit in 24 days`, { hint: 'Give at least one request per 24 days, e.g. 1/h.' });
  }
  return perSecond;
}

/** Parse a byte size such as `1mb`, `512kb`, `100b` or `2048` (bare = bytes; 1kb = 1024 bytes, as body-parser counts). */
export function parseSize(text: string, flag: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = m ? SIZE_UNITS.get(m[2]!.toLowerCase()) : undefined;
  if (!m || unit === undefined) {
    throw new UsageError(`${flag}: cannot read ${shown(text)} as a size`, { hint: 'Use a number of bytes or a unit: 512kb, 1mb, 2gb.' });
  }
  const bytes = Math.floor(Number(m[1]) * unit);
  if (bytes < 1) throw new UsageError(`${flag}: the size must be at least 1 byte`);
  if (!Number.isSafeInteger(bytes)) throw new UsageError(`${flag}: ${text.trim()} is too large`, { hint: 'Use at most a few gb.' });
  return bytes;
}

/**
 * Parse a whole number from `min` to `max` (both safe integers): decimal digits only, so `1e3`, `1.5`,
 * `-1`, `0x10` and anything past Number.MAX_SAFE_INTEGER (which would be sent as `1e+23`) are refused
 * with the flag and its range. The one parser of every integer flag.
 */
export function parseInteger(text: string, flag: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const trimmed = text.trim();
  const n = /^\d+$/.test(trimmed) ? Number(trimmed) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `${min} or more` : `from ${min} to ${max}`;
    throw new UsageError(`${flag} must be a whole number ${range}, got ${shown(text)}`);
  }
  return n;
}

/** Parse a TCP port, 0 to 65535 (0 = any free port). */
export function parsePort(text: string, flag = '--port'): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65_535) throw new UsageError(`${flag}: ${shown(text)} is not a port number (0-65535)`);
  return port;
}

/** A byte count for people: 512 B, 1.4 kB, 2.0 MB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} kB`;
  return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
}
