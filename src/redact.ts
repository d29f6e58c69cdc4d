// Keeping secrets (the API token, spec 5; the webhook signing key, spec 6) out of what cardboard prints
// and writes. Secrets are removed by structure where the code knows they are: the x-token header is
// never logged, base URLs lose any user:password, and the HTTP core and the webhook client scrub their
// own secret from the server's answers before anyone else sees them. redactSecrets is only the last net.

/** A secret at least this long is replaced wherever it occurs: a chance match in other text is then negligible. */
export const MIN_SUBSTRING_SECRET = 8;

/** What stands in for a secret wherever cardboard prints or writes text that held one. */
export const MASK = '***';

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Text in which the code knows `secret` may be echoed (a server's error message, a receiver's answer),
 * with the secret replaced by `***`: every occurrence of a secret of 8 characters or more; a shorter one
 * only where it stands alone (no letter or digit either side), so a one-letter test token `t` hides
 * `bad token t` without turning `token` into `***oken`.
 */
export function scrubSecret(text: string, secret: string): string {
  if (secret.length === 0 || !text.includes(secret)) return text;
  if (secret.length >= MIN_SUBSTRING_SECRET) return text.split(secret).join(MASK);
  return text.replace(new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(secret)}(?![\\p{L}\\p{N}])`, 'gu'), MASK);
}

/**
 * A decoded JSON answer (data, not a message) with every string holding `secret` scrubbed, keys included.
 * Only secrets of 8 characters or more: data is never altered for a short value that may be a chance match.
 */
export function scrubValue(value: unknown, secret: string): unknown {
  if (secret.length < MIN_SUBSTRING_SECRET) return value;
  if (typeof value === 'string') return scrubSecret(value, secret);
  if (Array.isArray(value)) return value.map((v) => scrubValue(v, secret));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [scrubSecret(k, secret), scrubValue(v, secret)]));
}

/**
 * A body's bytes as they came (a raw answer, `cardboard api`) with `secret` scrubbed: UTF-8 text as scrubSecret
 * does it; other bytes only for a secret of 8 characters or more (every occurrence of its bytes), since a short
 * one has no words around it to tell a match from chance there. Returns `bytes` itself when it has no secret.
 */
export function scrubBytes(bytes: Buffer, secret: string): Buffer {
  if (secret.length === 0 || !bytes.includes(secret)) return bytes;
  const text = bytes.toString('utf8');
  // Valid UTF-8 decodes and encodes back to the same bytes; anything else held a byte that is not text.
  if (Buffer.byteLength(text) === bytes.length && Buffer.from(text).equals(bytes)) return Buffer.from(scrubSecret(text, secret));
  if (secret.length < MIN_SUBSTRING_SECRET) return bytes;
  return maskBytes(bytes, Buffer.from(secret));
}

const MASK_BYTES = Buffer.from(MASK);

/** `bytes` with every occurrence of `needle` replaced by `***`; `bytes` itself, uncopied, when it holds none. */
export function maskBytes(bytes: Buffer, needle: Buffer): Buffer {
  let at = bytes.indexOf(needle);
  if (at === -1) return bytes;
  const parts: Buffer[] = [];
  let from = 0;
  for (; at !== -1; at = bytes.indexOf(needle, from)) {
    parts.push(bytes.subarray(from, at), MASK_BYTES);
    from = at + needle.length;
  }
  parts.push(bytes.subarray(from));
  return Buffer.concat(parts);
}

/**
 * The safety net over every line printed to a person: each secret of 8 characters or more replaced by `***`.
 * Shorter secrets are left to the structural scrubbing above: replacing every `t` of a message mangles it
 * (`h***p://…/ap***le***`) and protects nothing a one-letter token could hide.
 */
export function redactSecrets(secrets: Iterable<string>, text: string): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= MIN_SUBSTRING_SECRET && out.includes(secret)) out = out.split(secret).join(MASK);
  }
  return out;
}

/**
 * A value about to be written to a file (a CSV cell, an NDJSON record), with every secret of 8 characters or
 * more replaced in each string, keys included, before it is encoded: once in CSV or JSON a secret holding `"`
 * or `\\` is escaped, and a search of the encoded text would miss it.
 */
export function redactValue(secrets: Iterable<string>, value: unknown): unknown {
  let out = value;
  for (const secret of secrets) out = scrubValue(out, secret);
  return out;
}

/** The run's secrets as everything that prints or writes sees them: read, never added to. */
export interface Redactor extends Iterable<string> {
  /** `text` with each secret of 8 characters or more replaced by `***` (redactSecrets). */
  redact(text: string): string;
  /** `value` with each secret replaced in its strings, keys included, before it is encoded (redactValue). */
  redactValue(value: unknown): unknown;
}

/** Where a secret learned during the run is put, so that everything printed after hides it. */
export interface SecretKeeper {
  add(secret: string): void;
}

/**
 * The secrets of one run (tokens, signing keys), kept for redaction. main makes one and hands it, as a
 * SecretKeeper, to whoever learns a secret (the API session, a command that reads a key or a token); the
 * context and everything below it get only the reading side, `reader`.
 */
export class Secrets implements Redactor, SecretKeeper {
  readonly #known = new Set<string>();
  /** The reading side alone (it reads this registry as it grows): the context's `secrets`. */
  readonly reader: Redactor;

  constructor(known: Iterable<string> = []) {
    for (const secret of known) this.#known.add(secret);
    const values = () => this.#known.values();
    this.reader = Object.freeze({ redact: (text: string) => this.redact(text), redactValue: (value: unknown) => this.redactValue(value), [Symbol.iterator]: values });
  }

  add(secret: string): void {
    this.#known.add(secret);
  }

  redact(text: string): string {
    return redactSecrets(this.#known, text);
  }

  redactValue(value: unknown): unknown {
    return redactValue(this.#known, value);
  }

  [Symbol.iterator](): Iterator<string> {
    return this.#known.values();
  }
}
