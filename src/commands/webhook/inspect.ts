import type { Context } from '../../context.js';
import { CardboardError } from '../../errors.js';
import type { Duration } from '../../units.js';
import { parsePort } from '../../units.js';
import type { Inspector } from '../../webhook/inspector/server.js';

/** The inspector's port without a value: 4040, else the next free one up to 4060 (ngrok's own page may hold 4040). */
export const INSPECT_FIRST_PORT = 4040;
export const INSPECT_LAST_PORT = 4060;

/** Where --inspect may listen: the ports to try in order, and whether the user named one. */
export interface InspectPlan {
  ports: number[];
  explicit: boolean;
}

/** The plan for `--inspect [port]` (true: no port given). */
export function inspectPlan(value: string | true): InspectPlan {
  if (value === true) return { ports: Array.from({ length: INSPECT_LAST_PORT - INSPECT_FIRST_PORT + 1 }, (_, i) => INSPECT_FIRST_PORT + i), explicit: false };
  return { ports: [parsePort(value, '--inspect')], explicit: true };
}

export interface OpenInspector {
  plan: InspectPlan;
  key: string | undefined;
  verified: boolean;
  forwardTo: string | undefined;
  recording: boolean;
  replayTimeout: Duration;
  /** Secrets the page must not show, decoded bodies and changes included. */
  secrets: readonly string[];
}

/** Make the inspector (not listening yet: history can be added first). Loaded only when --inspect is given. */
export async function makeInspector(ctx: Context, o: OpenInspector): Promise<Inspector> {
  const { Inspector } = await import('../../webhook/inspector/server.js');
  return new Inspector({ ports: o.plan.ports, key: o.key, verified: o.verified, forwardTo: o.forwardTo, recording: o.recording, insecure: ctx.globals.insecure, replayTimeout: o.replayTimeout, secrets: o.secrets });
}

/** Start the inspector's server; a port in use is an error naming it (exit 1). */
export async function startInspector(inspector: Inspector, plan: InspectPlan): Promise<string> {
  try {
    return await inspector.start();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const where = plan.explicit ? `127.0.0.1:${plan.ports[0]}` : `any of 127.0.0.1:${INSPECT_FIRST_PORT}-${INSPECT_LAST_PORT}`;
    throw new CardboardError(`cannot open the inspector on ${where} (${code ?? (err as Error).message})`, {
      hint: code === 'EADDRINUSE' ? 'Pick another port: --inspect <port> (0: any free port).' : undefined,
      cause: err,
    });
  }
}

/** The one line that gives the page's URL; printed once, on stderr, even with --quiet. */
export function inspectorLine(url: string): string {
  return `Inspector: ${url} (the token in this URL is the page's key; it ends with this run)\n`;
}
