import { terminalText } from '../../io/text.js';
import { parsePort } from '../../units.js';
import type { InspectPlan } from '../../webhook/inspector/open.js';
import type { ReplayEvent } from '../../webhook/inspector/replay.js';
import { answerStart, answerStartData, answerText } from './render.js';

/** The inspector's port without a value: 4040, else the next free one up to 4060 (ngrok's own page may hold 4040). */
export const INSPECT_FIRST_PORT = 4040;
export const INSPECT_LAST_PORT = 4060;

/** The plan for `--inspect [port]` (true: no port given). */
export function inspectPlan(value: string | true): InspectPlan {
  if (value === true) return { ports: Array.from({ length: INSPECT_LAST_PORT - INSPECT_FIRST_PORT + 1 }, (_, i) => INSPECT_FIRST_PORT + i), explicit: false };
  return { ports: [parsePort(value, '--inspect')], explicit: true };
}

/**
 * The one line that gives the page's URL; printed once, on stderr, even with --quiet. With --record the
 * token is kept beside the record file (`tokenFile`) and the URL stays the same for the next run with it,
 * unless the port it was served on is not this run's (`movedFrom`): then the line says the URL changed.
 */
export function inspectorLine(url: string, tokenFile?: string, movedFrom?: number): string {
  if (tokenFile === undefined) return `Inspector: ${url} (the token in this URL is the page's key; it ends with this run: --record keeps it)\n`;
  // The kept port was taken (or --inspect named another): a page open at the old URL cannot follow.
  if (movedFrom !== undefined) return `Inspector: ${url} (the token in this URL is the page's key, kept in ${terminalText(tokenFile)}; the URL changed: port ${movedFrom} of the last run is not this run's, open the page again at this URL)\n`;
  return `Inspector: ${url} (the token in this URL is the page's key, kept in ${terminalText(tokenFile)}: the same URL works after a restart with this --record)\n`;
}

/** A replay from the inspector, as a line beside the deliveries: `↻ #3 replayed (edited) → URL: 200 OK in 12 ms  start`. */
export function replayLine(e: ReplayEvent): string {
  const start = answerStart(e.answer.body);
  return terminalText(`↻ #${e.seq} replayed${e.edited ? ' (edited)' : ''} → ${e.url}: ${answerText(e.answer)}${start ? `  ${start}` : ''}`);
}

/** A replay as a `--json` line: {"replay": {seq, url, edited, status, ms, error?, body}} (docs/json.md). */
export function replayJson(e: ReplayEvent): string {
  const replay: Record<string, unknown> = { seq: e.seq, url: e.url, edited: e.edited, status: e.answer.status ?? null, ms: Math.round(e.answer.ms * 10) / 10 };
  if (e.answer.error !== undefined) replay.error = e.answer.error;
  replay.body = answerStartData(e.answer.body);
  return JSON.stringify({ replay });
}
