import { UsageError } from '../errors.js';

/** Parse `--timeout`: `500ms`, `30s`, `2m`, or bare seconds; returns milliseconds. */
export function parseDuration(raw: string, flag = '--timeout'): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min)?\s*$/i.exec(raw);
  const unit = (m?.[2] ?? 's').toLowerCase();
  const ms = m ? Number(m[1]) * (unit === 'ms' ? 1 : unit === 's' ? 1000 : 60_000) : Number.NaN;
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new UsageError(`Invalid ${flag} value: ${raw}`, { hint: `Use a duration such as 500ms, 30s or 2m.` });
  }
  return Math.round(ms);
}

/** Parse `--rate`: `N/s`, `N/min` (also `N/m`), or bare N per second; returns requests per second. */
export function parseRate(raw: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(?:\/\s*(s|sec|second|m|min|minute))?\s*$/i.exec(raw);
  const perSecond = m ? Number(m[1]) / (m[2]?.toLowerCase().startsWith('m') ? 60 : 1) : Number.NaN;
  if (!Number.isFinite(perSecond) || perSecond <= 0) {
    throw new UsageError(`Invalid --rate value: ${raw}`, { hint: 'Use a rate such as 2/s or 120/min.' });
  }
  return perSecond;
}
