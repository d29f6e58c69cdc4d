// What `mirror status` prints: aligned lines for a person, or one JSON object.
import { groupDigits, plural, terminalText } from '../../io/text.js';
import { type Freshness, LISTENER_BEAT_MS, type MirrorStatus } from '../../mirror/types.js';
import { formatDuration } from '../../units.js';

/** How long ago `iso` was, for people: `3m20s ago`, `just now`. */
function ago(iso: string, now: number): string {
  const ms = now - Date.parse(iso);
  if (!Number.isFinite(ms)) return 'at an unknown time';
  if (ms < 1000) return 'just now';
  return `${formatDuration(Math.floor(ms / 1000) * 1000)} ago`;
}

/** Whether the listener's last beat is recent enough for it to be alive (LISTENER_BEAT_MS). */
export function listenerAlive(listener: MirrorStatus['listener'], now: number): boolean {
  return listener !== undefined && now - Date.parse(listener.beatAt) <= 2 * LISTENER_BEAT_MS;
}

/** The status as lines of `label  value`, each made safe for a terminal (ids and URLs come from the user). */
export function statusLines(s: MirrorStatus, fresh: Freshness, now: number): string[] {
  const rows: [string, string][] = [
    ['Mirror', s.location],
    ['Board', `${s.board.id} on ${s.board.baseUrl}`],
    ['Cards', groupDigits(s.cards)],
  ];
  const last = s.lastPull;
  rows.push(['Last pull', last ? `#${last.id} ended ${last.finishedAt} (${ago(last.finishedAt, now)}): ${plural(last.pages, 'page')}, ${plural(last.cards, 'card')} read, ${groupDigits(last.deleted)} deleted` : 'none complete']);
  const open = s.openPull;
  if (open) rows.push(['Open pull', `#${open.id} begun ${open.startedAt} (${ago(open.startedAt, now)}), next page ${groupDigits(open.nextPage)}: ${plural(open.pages, 'page')}, ${plural(open.cards, 'card')} saved`]);
  const d = s.deliveries;
  rows.push(['Deliveries', `${groupDigits(d.applied)} applied since the last pull began, ${groupDigits(d.unplaced)} unplaced${d.lastAt ? `; last ${d.lastAt} (${ago(d.lastAt, now)})` : ''}`]);
  const l = s.listener;
  rows.push(['Listener', l ? `${listenerAlive(l, now) ? 'alive' : 'gone'}: since ${l.since}, last beat ${ago(l.beatAt, now)}` : 'none']);
  rows.push(['Fresh', `${fresh.fresh ? 'yes' : 'no'}: ${fresh.reason}`]);
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => terminalText(`${label.padEnd(width)}  ${value}`));
}

/** The status as JSON: MirrorStatus's keys, the listener's `alive`, and `freshness`. */
export function statusJson(s: MirrorStatus, fresh: Freshness, now: number): Record<string, unknown> {
  const listener = s.listener ? { ...s.listener, alive: listenerAlive(s.listener, now) } : null;
  return {
    location: s.location,
    board: s.board,
    cards: s.cards,
    lastPull: s.lastPull ?? null,
    openPull: s.openPull ?? null,
    deliveries: s.deliveries,
    listener,
    freshness: fresh,
  };
}
