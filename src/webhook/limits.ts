import { networkInterfaces } from 'node:os';
import { UsageError } from '../errors.js';
import { isLoopbackHost } from '../http/url.js';
import { parseDurationList } from '../units.js';

/**
 * How long a connection to the listener may live and how many there may be. The service
 * waits up to 60 s for an answer (spec 6), so every bound is well under it: a connection that sends
 * nothing, or trickles, is closed long before it could matter, and idle sockets cannot use up the
 * process's file descriptors while real deliveries wait.
 */
export interface ConnectionLimits {
  /** Open connections at most; at the cap the oldest idle one is closed for a new one, or the new one is. */
  maxConnections: number;
  /** A connection with no request in progress (new, or kept alive after an answer) is closed after this. */
  idleMs: number;
  /** The request line and headers must be in within this, from the connection's start. */
  headersMs: number;
  /** The whole request, headers and body, must be in within this. */
  requestMs: number;
}

export const DEFAULT_LIMITS: ConnectionLimits = { maxConnections: 128, idleMs: 10_000, headersMs: 15_000, requestMs: 30_000 };

/** The env knob that shortens the timeouts (tests, slow links): `idle=200ms,headers=1s,request=2s`. */
export const TIMEOUTS_ENV = 'CARDBOARD_WEBHOOK_TIMEOUTS';

const TIMEOUT_NAMES: ReadonlyMap<string, 'idleMs' | 'headersMs' | 'requestMs'> = new Map([
  ['idle', 'idleMs'],
  ['headers', 'headersMs'],
  ['request', 'requestMs'],
]);

/** Parse CARDBOARD_WEBHOOK_TIMEOUTS over the defaults; throws a UsageError naming the variable. */
export function timeoutsFromEnv(value: string | undefined, base: ConnectionLimits = DEFAULT_LIMITS): ConnectionLimits {
  const set = parseDurationList(value, TIMEOUTS_ENV, TIMEOUT_NAMES, 'timeout', 'idle=10s,headers=15s,request=30s');
  const out = { ...base, ...Object.fromEntries(set) };
  // node:http refuses a headers timeout longer than the whole request's: a shorter request shortens the
  // default headers timeout with it; an explicit pair that contradicts itself is refused.
  if (!set.has('headersMs')) out.headersMs = Math.min(out.headersMs, out.requestMs);
  if (out.headersMs > out.requestMs) throw new UsageError(`${TIMEOUTS_ENV}: headers (${out.headersMs} ms) cannot be longer than request (${out.requestMs} ms)`);
  return out;
}

/** The listener's own id in `x-cardboard-forwarded`: a delivery that carries it came back through a forward loop. */
export const FORWARDED_HEADER = 'x-cardboard-forwarded';

/** Whether the comma-separated `x-cardboard-forwarded` value names this listener. */
export function hasForwarded(value: string | undefined, id: string): boolean {
  return value !== undefined && value.split(',').some((v) => v.trim() === id);
}

const WILDCARD = new Set(['0.0.0.0', '::', '0:0:0:0:0:0:0:0']);

/** Addresses of this machine's interfaces, lower-case, without brackets. */
function ownAddresses(): Set<string> {
  const out = new Set<string>();
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) out.add(a.address.toLowerCase());
  return out;
}

/**
 * Whether `url` reaches the listener bound to `host`:`port`: forwarding to itself would turn one
 * delivery into tens of thousands within seconds. Names are not resolved (no DNS): loopback names and addresses, the
 * wildcard and this machine's own addresses count as "here"; the x-cardboard-forwarded header catches
 * the rest (a proxy, a name that resolves here).
 */
export function reachesListener(url: string, host: string, port: number): boolean {
  const parsed = new URL(url);
  const targetPort = Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80));
  if (targetPort !== port) return false;
  const target = parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const bound = host.replace(/^\[|\]$/g, '').toLowerCase();
  const local = (h: string) => isLoopbackHost(h) || WILDCARD.has(h);
  if (target === bound) return true;
  // Bound to every interface: any address of this machine reaches it.
  if (WILDCARD.has(bound)) return local(target) || ownAddresses().has(target);
  // Bound to loopback: any loopback name, and 0.0.0.0 (which connects to this machine), reach it.
  if (isLoopbackHost(bound)) return local(target);
  return WILDCARD.has(target) && ownAddresses().has(bound);
}
