import { parsePort } from '../../units.js';
import type { InspectPlan } from '../../webhook/inspector/open.js';

/** The inspector's port without a value: 4040, else the next free one up to 4060 (ngrok's own page may hold 4040). */
export const INSPECT_FIRST_PORT = 4040;
export const INSPECT_LAST_PORT = 4060;

/** The plan for `--inspect [port]` (true: no port given). */
export function inspectPlan(value: string | true): InspectPlan {
  if (value === true) return { ports: Array.from({ length: INSPECT_LAST_PORT - INSPECT_FIRST_PORT + 1 }, (_, i) => INSPECT_FIRST_PORT + i), explicit: false };
  return { ports: [parsePort(value, '--inspect')], explicit: true };
}

/** The one line that gives the page's URL; printed once, on stderr, even with --quiet. */
export function inspectorLine(url: string): string {
  return `Inspector: ${url} (the token in this URL is the page's key; it ends with this run)\n`;
}
