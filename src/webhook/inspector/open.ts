// Opening the inspector of a listen run: made first (the record's history is added before it serves), then
// started on the first free port of the plan, with an error that names the ports. With a record file the
// token (and the port) is kept beside it (token-file.ts), so the page's URL survives a restart.
import { CardboardError } from '../../errors.js';
import type { Duration } from '../../units.js';
import type { ReplayEvent } from './replay.js';
import type { Inspector } from './server.js';
import { keepToken, type KeptToken, readKeptToken, tokenFilePath } from './token-file.js';

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
  /** The record file, if any: the token is kept beside it. */
  record: string | undefined;
  /** Allow plain http:// replays to a host that is not loopback (--insecure). */
  insecure: boolean | undefined;
  replayTimeout: Duration;
  /** Secrets the page must not show, decoded bodies and changes included. */
  secrets: readonly string[];
  onReplay: (e: ReplayEvent) => void;
  /** Where the run's listener listens, once it does (a replay there is refused). */
  listener: () => { host: string; port: number } | undefined;
}

/** An inspector made, with the file its token is kept in and what that file held. */
export interface OpenedInspector {
  inspector: Inspector;
  plan: InspectPlan;
  tokenFile?: string;
  kept?: KeptToken;
}

/**
 * Make the inspector (not listening yet: history can be added first). Its module is loaded only here. With
 * a record file, the token kept beside it is used, and its port tried first unless --inspect named one; a
 * file there that is not one listen wrote is a CardboardError naming it.
 */
export async function makeInspector(o: OpenInspector): Promise<OpenedInspector> {
  const tokenFile = o.record === undefined ? undefined : tokenFilePath(o.record);
  const kept = tokenFile === undefined ? undefined : readKeptToken(tokenFile);
  const plan = kept && !o.plan.explicit ? { ports: [kept.port, ...o.plan.ports.filter((p) => p !== kept.port)], explicit: false } : o.plan;
  const { Inspector } = await import('./server.js');
  const inspector = new Inspector({
    ports: plan.ports, key: o.key, verified: o.verified, forwardTo: o.forwardTo, recording: o.record !== undefined, insecure: o.insecure,
    replayTimeout: o.replayTimeout, secrets: o.secrets, token: kept?.token, tokenFile, onReplay: o.onReplay, listener: o.listener,
  });
  return { inspector, plan: o.plan, tokenFile, kept };
}

/** Start the inspector's server, then keep its token and port (when recording); a port in use is an error naming it (exit 1). */
export async function startInspector({ inspector, plan, tokenFile, kept }: OpenedInspector): Promise<string> {
  let url: string;
  try {
    url = await inspector.start();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const where = plan.explicit ? `127.0.0.1:${plan.ports[0]}` : `any of 127.0.0.1:${plan.ports[0]}-${plan.ports.at(-1)}`;
    throw new CardboardError(`cannot open the inspector on ${where} (${code ?? (err as Error).message})`, {
      hint: code === 'EADDRINUSE' ? 'Pick another port: --inspect <port> (0: any free port).' : undefined,
      cause: err,
    });
  }
  if (tokenFile !== undefined && (kept === undefined || kept.port !== inspector.port)) keepToken(tokenFile, { token: inspector.token, port: inspector.port }, kept !== undefined);
  return url;
}
