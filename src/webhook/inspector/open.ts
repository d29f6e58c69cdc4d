// Opening the inspector of a listen run: made first (the record's history is added before it serves), then
// started on the first free port of the plan, with an error that names the ports.
import { CardboardError } from '../../errors.js';
import type { Duration } from '../../units.js';
import type { Inspector } from './server.js';

/** Where the inspector may listen: the ports to try in order, and whether the user named one. */
export interface InspectPlan {
  ports: number[];
  explicit: boolean;
}

interface OpenInspector {
  plan: InspectPlan;
  key: string | undefined;
  verified: boolean;
  forwardTo: string | undefined;
  recording: boolean;
  /** Allow plain http:// replays to a host that is not loopback (--insecure). */
  insecure: boolean | undefined;
  replayTimeout: Duration;
  /** Secrets the page must not show, decoded bodies and changes included. */
  secrets: readonly string[];
}

/** Make the inspector (not listening yet: history can be added first). Its module is loaded only here. */
export async function makeInspector(o: OpenInspector): Promise<Inspector> {
  const { Inspector } = await import('./server.js');
  return new Inspector({ ports: o.plan.ports, key: o.key, verified: o.verified, forwardTo: o.forwardTo, recording: o.recording, insecure: o.insecure, replayTimeout: o.replayTimeout, secrets: o.secrets });
}

/** Start the inspector's server; a port in use is an error naming it (exit 1). */
export async function startInspector(inspector: Inspector, plan: InspectPlan): Promise<string> {
  try {
    return await inspector.start();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const where = plan.explicit ? `127.0.0.1:${plan.ports[0]}` : `any of 127.0.0.1:${plan.ports[0]}-${plan.ports.at(-1)}`;
    throw new CardboardError(`cannot open the inspector on ${where} (${code ?? (err as Error).message})`, {
      hint: code === 'EADDRINUSE' ? 'Pick another port: --inspect <port> (0: any free port).' : undefined,
      cause: err,
    });
  }
}
