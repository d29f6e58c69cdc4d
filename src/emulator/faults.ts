import { UsageError } from '../errors.js';
import { parseDuration } from '../units.js';

/** A fault spec that cannot be parsed; the message names the bad part. */
export class FaultSpecError extends Error {
  override name = 'FaultSpecError';
}

/** Probabilities (0..1) of each fault kind, and the added latency. */
export interface FaultSpec {
  /** 503 with Retry-After: 1, before the request is applied. */
  unavailable: number;
  /** The request is applied (card stored), then answered 500. */
  errorAfter: number;
  /** The connection is destroyed without an answer, before the request is applied. */
  reset: number;
  /** The request is applied, then the connection is destroyed without an answer. */
  resetAfter: number;
  /** Added to every /api request before it is handled. */
  delayMs: number;
}

const KINDS = new Map<string, keyof Omit<FaultSpec, 'delayMs'>>([
  ['503', 'unavailable'],
  ['500-after', 'errorAfter'],
  ['reset', 'reset'],
  ['reset-after', 'resetAfter'],
]);

/** Parse `503:0.05,500-after:0.02,reset:0.02,reset-after:0.01,delay:200ms` (empty: no faults). */
export function parseFaults(spec: string): FaultSpec {
  const out: FaultSpec = { unavailable: 0, errorAfter: 0, reset: 0, resetAfter: 0, delayMs: 0 };
  for (const part of spec.split(',').map((p) => p.trim()).filter(Boolean)) {
    const colon = part.lastIndexOf(':');
    const kind = colon === -1 ? part : part.slice(0, colon);
    const value = colon === -1 ? '' : part.slice(colon + 1);
    if (kind === 'delay') {
      // The same duration grammar as every flag (units.ts): a bare `delay:200` names no unit.
      try {
        out.delayMs = parseDuration(value, 'delay');
      } catch (err) {
        if (err instanceof UsageError) throw new FaultSpecError(`${err.message} in "${part}" (e.g. delay:200ms or delay:1s)`);
        throw err;
      }
      continue;
    }
    const key = KINDS.get(kind);
    if (!key) throw new FaultSpecError(`unknown fault "${kind}" (known: 503, 500-after, reset, reset-after, delay)`);
    const probability = Number(value);
    if (value === '' || !Number.isFinite(probability) || probability < 0 || probability > 1) {
      throw new FaultSpecError(`bad probability "${value}" in "${part}" (a number from 0 to 1)`);
    }
    out[key] = probability;
  }
  return out;
}

/** mulberry32: a tiny seedable PRNG, so a fault run can be repeated exactly. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
