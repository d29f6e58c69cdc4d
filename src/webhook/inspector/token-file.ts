// The inspector's token kept beside a record file (`F.inspector` for --record F), so that the page's URL
// stays the same when the listener restarts with the same --record: {"token": "...", "port": 4040}. The
// token is the page's key, so the file is owner-only (src/private-file.ts), and only a file this module
// wrote is used or changed: anything else at that path is refused, naming it.
import { closeSync, constants, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { CardboardError } from '../../errors.js';
import { errnoCode } from '../../fs-errors.js';
import { terminalText } from '../../io/text.js';
import { createPrivateFile, notPrivateFile, writePrivateFile } from '../../private-file.js';

/** What the file holds: the token, and the port the page was served on (tried first next time). */
export interface KeptToken {
  token: string;
  port: number;
}

/** The file's size at most: listen writes some 60 bytes; anything larger is not its file, and is not read. */
const MAX_BYTES = 4096;

/** A token as the inspector makes them: 24 random bytes in base64url. */
const TOKEN = /^[A-Za-z0-9_-]{32}$/;

/** The file that keeps the token of a listen run recording to `record`. */
export function tokenFilePath(record: string): string {
  return `${record}.inspector`;
}

function refused(path: string, why: string): CardboardError {
  return new CardboardError(`cannot use ${terminalText(path)} for the inspector's token: ${why}`, {
    hint: `It is made by \`webhook listen --inspect --record\`; remove it (a new token is made and kept there), or pass another --record.`,
  });
}

/**
 * The token kept at `path`, or undefined when there is no file. A file that is not a regular file of
 * this user readable by it alone, or does not hold {token, port}, is a CardboardError naming it: it is
 * neither used nor changed.
 */
export function readKeptToken(path: string): KeptToken | undefined {
  let why: string | undefined;
  try {
    why = notPrivateFile(path);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return undefined;
    throw refused(path, (err as Error).message);
  }
  // Readable by others, the token is no longer the page's key alone.
  if (why) throw refused(path, why);
  let value: unknown;
  try {
    value = JSON.parse(readSmall(path, (why) => refused(path, why)));
  } catch (err) {
    if (err instanceof CardboardError) throw err;
    throw refused(path, errnoCode(err) ? (err as Error).message : 'it is not JSON');
  }
  const kept = value as Partial<KeptToken> | null;
  if (typeof kept !== 'object' || kept === null || typeof kept.token !== 'string' || !TOKEN.test(kept.token) || !Number.isInteger(kept.port) || kept.port! < 1 || kept.port! > 65535) {
    throw refused(path, 'it does not hold {"token", "port"} as listen writes them');
  }
  return { token: kept.token, port: kept.port! };
}

/**
 * The text of the regular file at `path`, read only when it is MAX_BYTES at most (else `refuse` says why).
 * Opened without following a symbolic link (one put there since it was checked is an error, ELOOP), and
 * without waiting on a FIFO.
 */
function readSmall(path: string, refuse: (why: string) => Error): string {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw refuse('it is not a regular file');
    const tooLarge = (size: number) => refuse(`it is ${size} bytes, not the few that listen writes`);
    if (stat.size > MAX_BYTES) throw tooLarge(stat.size);
    const buf = Buffer.alloc(MAX_BYTES + 1);
    let done = 0;
    for (let n = -1; n !== 0 && done < buf.length; done += n) n = readSync(fd, buf, done, buf.length - done, null);
    if (done > MAX_BYTES) throw tooLarge(done);
    return buf.subarray(0, done).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * Keep `kept` at `path`: a new file is created owner-only (0600, O_EXCL: nothing that appeared since
 * readKeptToken is overwritten); a file readKeptToken read is rewritten in place, its mode unchanged.
 */
export function keepToken(path: string, kept: KeptToken, existed: boolean): void {
  const text = `${JSON.stringify(kept)}\n`;
  try {
    if (existed) {
      writePrivateFile(path, text, { flag: '--record', reread: true });
      return;
    }
    const fd = createPrivateFile(path);
    try {
      const bytes = Buffer.from(text);
      for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    if (err instanceof CardboardError) throw err;
    throw new CardboardError(`cannot keep the inspector's token in ${terminalText(path)}: ${(err as Error).message}`, {
      hint: 'Check that the record file\'s folder is writable, or pass another --record.',
      cause: err,
    });
  }
}
