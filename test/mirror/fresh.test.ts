// The freshness rule of a mirror (src/mirror/fresh.ts), as a table of cases.
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_AGE_MS, freshness } from '../../src/mirror/fresh.js';
import { LISTENER_BEAT_MS, type MirrorStatus } from '../../src/mirror/types.js';

const NOW = Date.parse('2030-01-01T12:00:00.000Z');
const at = (minutesBefore: number) => new Date(NOW - minutesBefore * 60_000).toISOString();
/** A local HH:MM, as the reason shows a listener's start. */
const hhmm = (iso: string) => `${String(new Date(iso).getHours()).padStart(2, '0')}:${String(new Date(iso).getMinutes()).padStart(2, '0')}`;

function status(lastPullMinutesAgo?: number, listener?: { since: number; beatSecondsAgo: number }): MirrorStatus {
  const s: MirrorStatus = { location: '/m.db', board: { baseUrl: 'http://h', server: 'h:80', id: 'b' }, cards: 1, deliveries: { applied: 0, unplaced: 0 } };
  if (lastPullMinutesAgo !== undefined) s.lastPull = { id: 1, startedAt: at(lastPullMinutesAgo + 1), finishedAt: at(lastPullMinutesAgo), pages: 1, cards: 1, deleted: 0 };
  if (listener !== undefined) s.listener = { since: at(listener.since), beatAt: new Date(NOW - listener.beatSecondsAgo * 1000).toISOString() };
  return s;
}

describe('freshness', () => {
  it('defaults to 15 minutes', () => {
    expect(DEFAULT_MAX_AGE_MS).toBe(900_000);
  });

  const beatLimit = (2 * LISTENER_BEAT_MS) / 1000;
  it.each([
    ['never pulled', status(), { fresh: false, reason: 'never pulled' }],
    ['never pulled, even with a listener', status(undefined, { since: 60, beatSecondsAgo: 1 }), { fresh: false, reason: 'never pulled' }],
    ['pulled 3 minutes ago', status(3), { fresh: true, ageMs: 180_000, reason: 'pulled 3m ago' }],
    ['pulled 40 seconds ago', status(40 / 60), { fresh: true, ageMs: 40_000, reason: 'pulled 40s ago' }],
    ['pulled exactly the max age ago', status(15), { fresh: true, ageMs: 900_000, reason: 'pulled 15m ago' }],
    ['pulled a moment over the max age ago', status(15.01), { fresh: false, ageMs: 900_600, reason: 'pulled 15m ago (older than --max-age 15m)' }],
    ['pulled 2 hours ago', status(125), { fresh: false, ageMs: 7_500_000, reason: 'pulled 2h5m ago (older than --max-age 15m)' }],
    ['a live listener since before the pull', status(125, { since: 200, beatSecondsAgo: 3 }), { fresh: true, ageMs: 0, reason: `fed by a listener since ${hhmm(at(200))}` }],
    ['a live listener started within the max age after the pull', status(125, { since: 111, beatSecondsAgo: beatLimit }), { fresh: true, ageMs: 0, reason: `fed by a listener since ${hhmm(at(111))}` }],
    ['a live listener started more than the max age after the pull', status(125, { since: 109, beatSecondsAgo: 1 }), { fresh: false, ageMs: 7_500_000, reason: 'pulled 2h5m ago (older than --max-age 15m)' }],
    ['a listener silent for more than two beats', status(125, { since: 200, beatSecondsAgo: beatLimit + 1 }), { fresh: false, ageMs: 7_500_000, reason: 'pulled 2h5m ago (older than --max-age 15m)' }],
    ['a silent listener and a recent pull', status(2, { since: 200, beatSecondsAgo: 600 }), { fresh: true, ageMs: 120_000, reason: 'pulled 2m ago' }],
  ])('%s', (_, s, expected) => {
    expect(freshness(s, DEFAULT_MAX_AGE_MS, NOW)).toEqual(expected);
  });

  it('measures against the max age given', () => {
    expect(freshness(status(20), 30 * 60_000, NOW)).toEqual({ fresh: true, ageMs: 1_200_000, reason: 'pulled 20m ago' });
    expect(freshness(status(20), 60_000, NOW)).toEqual({ fresh: false, ageMs: 1_200_000, reason: 'pulled 20m ago (older than --max-age 1m)' });
  });
});
