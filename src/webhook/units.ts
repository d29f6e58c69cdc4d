import { UsageError } from '../errors.js';

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, kb: 1024, m: 1024 ** 2, mb: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3 };
const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, '': 1000, m: 60_000, h: 3_600_000 };

/** Parse a byte size such as `1mb`, `512kb`, `100b` or `2048` (1kb = 1024 bytes, as body-parser counts). */
export function parseSize(text: string, flag = '--max-body'): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = m ? SIZE_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) {
    throw new UsageError(`${flag}: cannot read "${text}" as a size`, { hint: 'Use a number of bytes or a unit: 512kb, 1mb, 2gb.' });
  }
  const bytes = Math.floor(Number(m[1]) * unit);
  if (bytes < 1) throw new UsageError(`${flag}: the size must be at least 1 byte`);
  return bytes;
}

/** Parse a duration such as `30s`, `500ms`, `2m`, `1h`, or a plain number of seconds, into milliseconds. */
export function parseDuration(text: string, flag: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|)\s*$/i.exec(text);
  if (!m) throw new UsageError(`${flag}: cannot read "${text}" as a duration`, { hint: 'Use e.g. 500ms, 30s, 2m.' });
  const ms = Math.round(Number(m[1]) * DURATION_UNITS[m[2]!.toLowerCase()]!);
  if (ms < 1) throw new UsageError(`${flag}: the duration must be more than 0`);
  return ms;
}

/** Parse a TCP port (0 = any free port). */
export function parsePort(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65_535) throw new UsageError(`--port: "${text}" is not a port number (0-65535)`);
  return port;
}

/** A byte count for people: 512 B, 1.4 kB, 2.0 MB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} kB`;
  return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
}
