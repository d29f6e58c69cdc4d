// Whether bytes are one JSON text, found by a scan of the bytes themselves: no string or value is made of
// them, so a large body can be checked and then written as it came (large-lines.ts).

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
/** The characters after a backslash in a JSON string: " \ / b f n r t (u is checked on its own). */
const ESCAPES = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);
/** Bytes a JSON number is made of. */
const NUMBER_BYTES = new Set([0x2d, 0x2b, 0x2e, 0x45, 0x65, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39]);

const isHex = (c: number | undefined) => c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));

/** The end of the JSON string starting at b[i] (`"`), just past its closing quote; -1 if it is not one. */
function stringEnd(bytes: Buffer, i: number): number {
  if (bytes[i] !== 0x22) return -1;
  for (i++; i < bytes.length; ) {
    const byte = bytes[i]!;
    if (byte === 0x22) return i + 1;
    if (byte < 0x20) return -1;
    if (byte !== 0x5c) {
      i++;
      continue;
    }
    const escaped = bytes[i + 1];
    if (escaped === 0x75) {
      for (let k = 2; k < 6; k++) if (!isHex(bytes[i + k])) return -1;
      i += 6;
    } else if (escaped !== undefined && ESCAPES.has(escaped)) i += 2;
    else return -1;
  }
  return -1;
}

/** A whole JSON number; anchored and not global, so testing it changes nothing (no lastIndex). */
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** The end of the number starting at b[i]; -1 if there is none. */
function numberEnd(bytes: Buffer, i: number): number {
  let j = i;
  while (j < bytes.length && NUMBER_BYTES.has(bytes[j]!)) j++;
  return NUMBER.test(bytes.toString('latin1', i, j)) ? j : -1;
}

/**
 * Whether `b` is one JSON text (RFC 8259) as JSON.parse accepts it, checked without making a string or a
 * value of it. Iterative, so a deeply nested body cannot overflow the stack.
 */
export function isJsonText(bytes: Buffer): boolean {
  return jsonErrorOffset(bytes) === -1;
}

/**
 * Where `bytes` stops being one JSON text: the offset of the byte that cannot come there, or of the start
 * of the string or number that is not one (the length for a text cut short); -1 when it is JSON.
 */
export function jsonErrorOffset(bytes: Buffer): number {
  const length = bytes.length;
  let i = 0;
  /** Where the value or member being read began: what is reported when a string or a number is bad. */
  let at: number;
  const skip = () => {
    while (i < length && WS.has(bytes[i]!)) i++;
  };
  /** A member's `"name" :`, then the value is expected. */
  const member = (): boolean => {
    at = i;
    i = stringEnd(bytes, i);
    if (i === -1) return false;
    skip();
    if (bytes[i] !== 0x3a) {
      at = i;
      return false;
    }
    i++;
    return true;
  };
  const stack: number[] = [];
  skip();
  for (;;) {
    skip();
    at = i;
    const byte = bytes[i];
    if (byte === 0x7b || byte === 0x5b) {
      i++;
      skip();
      if (bytes[i] !== (byte === 0x7b ? 0x7d : 0x5d)) {
        stack.push(byte);
        if (byte === 0x7b && !member()) return at;
        continue;
      }
      i++;
    } else if (byte === 0x22) {
      i = stringEnd(bytes, i);
    } else if (byte === 0x2d || (byte !== undefined && byte >= 0x30 && byte <= 0x39)) {
      i = numberEnd(bytes, i);
    } else {
      const word = ['true', 'false', 'null'].find((w) => bytes.toString('latin1', i, i + w.length) === w);
      i = word ? i + word.length : -1;
    }
    if (i === -1) return at;
    // After a value: close containers, or a comma and the next value.
    for (;;) {
      skip();
      const top = stack.at(-1);
      if (top === undefined) return i === length ? -1 : i;
      at = i;
      const digit = bytes[i++];
      if (digit === 0x2c) {
        skip();
        if (top === 0x7b && !member()) return at;
        break;
      }
      if (digit !== (top === 0x7b ? 0x7d : 0x5d)) return at;
      stack.pop();
    }
  }
}

/** A JSON string, or a JSON number: the first alternative makes the scan skip numbers inside strings. */
const STRING_OR_NUMBER = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/**
 * The first number of a JSON text that JSON.parse cannot keep, so that the value written again is not the
 * one written here: out of range (1e999 becomes null) or an integer past 2^53 (a 20-digit id is rounded).
 * undefined when there is none. A number written otherwise but kept (1.10, 1e2) is not one.
 */
export function inexactNumber(text: string): string | undefined {
  for (const [token] of text.matchAll(STRING_OR_NUMBER)) {
    if (token.startsWith('"')) continue;
    const value = Number(token);
    if (!Number.isFinite(value) || (!/[.eE]/.test(token) && !Number.isSafeInteger(value))) return token;
  }
  return undefined;
}
