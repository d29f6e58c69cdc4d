// Whether a mirror can answer for the board now. A mirror is whole after a complete pull; deliveries keep it
// whole only while a listener has been feeding it since then (one started later may have missed changes
// made between the pull and its start, but no more than the age a user accepts).
import { formatDuration } from '../units.js';
import { type Freshness, LISTENER_BEAT_MS, type MirrorStatus } from './types.js';

/** The age a mirror may have and still answer for the board, when the user gives none (`--max-age`). */
export const DEFAULT_MAX_AGE_MS = 15 * 60_000;

/** An age for people, to the second under a minute and to the minute above: `45s`, `3m`, `2h5m`. */
function ageText(ms: number): string {
  if (ms < 60_000) return formatDuration(Math.max(1000, Math.round(ms / 1000) * 1000));
  return formatDuration(Math.round(ms / 60_000) * 60_000);
}

/** A time of day, local, as HH:MM. */
function clockTime(iso: string): string {
  const at = new Date(iso);
  return `${String(at.getHours()).padStart(2, '0')}:${String(at.getMinutes()).padStart(2, '0')}`;
}

/**
 * Whether the mirror in `status` is fresh at `nowMs`, given the age the user accepts: never completely
 * pulled, it is not; fed by a live listener (a beat within two beat periods) that started no later than
 * `maxAgeMs` after the last complete pull, it is, with age 0; else it is when its last complete pull
 * finished at most `maxAgeMs` ago.
 */
export function freshness(status: MirrorStatus, maxAgeMs: number, nowMs: number): Freshness {
  const finished = status.lastPull === undefined ? Number.NaN : Date.parse(status.lastPull.finishedAt);
  if (Number.isNaN(finished)) return { fresh: false, reason: 'never pulled' };
  const listener = status.listener;
  if (listener !== undefined && nowMs - Date.parse(listener.beatAt) <= 2 * LISTENER_BEAT_MS && Date.parse(listener.since) <= finished + maxAgeMs) {
    return { fresh: true, ageMs: 0, reason: `fed by a listener since ${clockTime(listener.since)}` };
  }
  const ageMs = Math.max(0, nowMs - finished);
  const pulled = `pulled ${ageText(ageMs)} ago`;
  if (ageMs <= maxAgeMs) return { fresh: true, ageMs, reason: pulled };
  return { fresh: false, ageMs, reason: `${pulled} (older than --max-age ${formatDuration(maxAgeMs)})` };
}
