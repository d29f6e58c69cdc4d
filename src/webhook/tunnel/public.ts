// A public listener: the tunnel tool found on PATH and run as a child with its own environment, or only
// the user's --public-url checked. Emits the tunnel's events; the command renders them.
import type { Clock } from '../../clock.js';
import { CardboardError, UsageError } from '../../errors.js';
import { DeliveryClient } from '../client.js';
import type { Listener } from '../listener.js';
import { publicUrlCheck } from './check.js';
import { startTool } from './child.js';
import { AUTO_ORDER, INSTALL, type ToolName, type TunnelTool, cloudflared, ngrok, ssh } from './tools.js';
import { Tunnel, type TunnelEvent, TunnelStartError, type TunnelTiming } from './tunnel.js';

/** Which tunnel to start: the first tool found, a named one, or ssh to the user's server. */
export type TunnelChoice = { tool: 'auto' } | { tool: 'cloudflared' | 'ngrok' } | { tool: 'ssh'; destination: string; remotePort?: number };

/** A tunnel tool found on PATH: its name and the executable that will run. */
interface FoundTool {
  name: ToolName;
  file: string;
}

/** Find the chosen tool on PATH (`which`, loaded only here); a UsageError names how to install it. */
export async function findTool(choice: TunnelChoice, env: NodeJS.ProcessEnv): Promise<FoundTool> {
  const { default: which } = await import('which');
  const find = (name: ToolName) => which.sync(name, { nothrow: true, path: env.PATH ?? '' }) ?? undefined;
  if (choice.tool === 'auto') {
    for (const name of AUTO_ORDER) {
      const file = find(name);
      if (file) return { name, file };
    }
    throw new UsageError('--tunnel: neither cloudflared nor ngrok is on PATH.', {
      hint: `Install one: ${INSTALL.cloudflared}; or ${INSTALL.ngrok}. Or use --tunnel ssh:user@host with --public-url, or --public-url alone for your own tunnel.`,
    });
  }
  const file = find(choice.tool);
  if (file) return { name: choice.tool, file };
  const install = choice.tool === 'ssh' ? 'the OpenSSH client (e.g. `apt install openssh-client`)' : INSTALL[choice.tool];
  throw new UsageError(`--tunnel ${choice.tool}: ${choice.tool} is not on PATH.`, { hint: `Install ${install}.` });
}

/** The tool's arguments for the listener at host:port. */
function tunnelTool(choice: TunnelChoice, found: FoundTool, host: string, port: number): TunnelTool {
  if (choice.tool === 'ssh') return ssh(choice.destination, choice.remotePort ?? port, host, port);
  return found.name === 'ngrok' ? ngrok(host, port) : cloudflared(host, port);
}

/** The tool's environment: the user's, without cardboard's own secrets (CARDBOARD_TOKEN, CARDBOARD_SIGNING_KEY…). */
export function toolEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) if (!name.startsWith('CARDBOARD_')) out[name] = value;
  return out;
}

/** The tunnel's start failed: exit 1, with what the tool said and where to look. */
export function startFailure(name: string, reason: string): CardboardError {
  return new CardboardError(`--tunnel ${name}: the tunnel did not come up: ${reason}`, {
    hint: name === 'ngrok' && /authtoken|ERR_NGROK_4018/i.test(reason)
      ? 'Run `ngrok config add-authtoken <token>` once (cardboard never asks for or stores it), or use --tunnel cloudflared.'
      : `Run with --verbose to see everything ${name} printed.`,
  });
}

/** How to make the listener public: a tool to run, or only the user's URL to check. */
export interface PublicPlan {
  choice: TunnelChoice | undefined;
  /** The tool found on PATH; none with --public-url alone. */
  found: FoundTool | undefined;
  publicUrl: string | undefined;
  timing: TunnelTiming;
  /** The user's environment, which the tool gets without cardboard's secrets. */
  env: NodeJS.ProcessEnv;
}

/** What runTunnel needs besides the plan. */
interface TunnelRun {
  host: string;
  path: string;
  /** The listener, started: its port, and the test deliveries it recognises. */
  listener: Listener;
  /** The signing key the listener verifies, which the test delivery carries. */
  key: string;
  clock: Clock;
  /** Stops the tunnel (the tool ends before the promise resolves). */
  signal: AbortSignal;
  onEvent(e: TunnelEvent): void;
}

/**
 * Run the tunnel (or only check --public-url) until `signal`. Rejects with a CardboardError (exit 1) when
 * the tunnel never came up.
 */
export async function runTunnel(plan: PublicPlan, run: TunnelRun): Promise<void> {
  const name = plan.found?.name ?? 'your tunnel';
  const client = new DeliveryClient(1);
  const tunnel = new Tunnel({
    tool: plan.found && plan.choice ? tunnelTool(plan.choice, plan.found, run.host, run.listener.port) : undefined,
    file: plan.found?.file,
    path: run.path,
    publicUrl: plan.publicUrl,
    check: publicUrlCheck(run.listener, run.key, client),
    start: (file, args, onLine) => startTool(file, args, onLine, toolEnv(plan.env)),
    clock: run.clock,
    timing: plan.timing,
    signal: run.signal,
    onEvent: run.onEvent,
  });
  try {
    await tunnel.run();
  } catch (err) {
    throw err instanceof TunnelStartError ? startFailure(name, err.message) : err;
  } finally {
    await client.close();
  }
}
