// What `cardboard api` sends, worked out from its words before anything is sent: the method, the fields of
// -f and -F, and where the path points. Pure functions: the command reads files and the board, these decide.
import { UsageError } from '../../errors.js';
import type { HttpMethod } from '../../http/index.js';
import { quoted } from '../../io/text.js';
import { emptyRecord } from '../../own-keys.js';
import { MIN_SUBSTRING_SECRET } from '../../redact.js';

/** The methods `cardboard api` sends; the spec shows GET and POST (4), the others are there to probe what it does not show. */
export const METHODS: readonly HttpMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** The method named by `word` (any case), or undefined when `word` names none. */
function methodOf(word: string): HttpMethod | undefined {
  const upper = word.toUpperCase();
  return METHODS.find((m) => m === upper);
}

function checkedMethod(word: string, where: string): HttpMethod {
  const method = methodOf(word);
  if (method === undefined) throw new UsageError(`${where}: unknown method ${quoted(word)}`, { hint: `Use one of ${METHODS.join(', ')}.` });
  return method;
}

/**
 * The method and path from the words `[METHOD] PATH` and --method: undefined method when neither names one
 * (the caller picks GET, or POST with a body, as gh does). A lone word that is a method is a missing path.
 */
export function methodAndPath(words: string[], flag: string | undefined): { method?: HttpMethod; path: string } {
  const fromFlag = flag === undefined ? undefined : checkedMethod(flag, '--method');
  if (words.length === 1) {
    const [path] = words as [string];
    if (methodOf(path) !== undefined && !path.includes('/')) {
      throw new UsageError(`missing the path after ${path.toUpperCase()}`, { hint: "Example: cardboard api GET '/api/aptlet/{board}'" });
    }
    return { method: fromFlag, path };
  }
  const [word, path] = words as [string, string];
  const method = checkedMethod(word, 'METHOD');
  if (fromFlag !== undefined && fromFlag !== method) throw new UsageError(`the method is given twice: ${method} and --method ${fromFlag}`);
  return { method, path };
}

/** One -f or -F pair as typed: -F values are converted (typedValue), -f values are strings. */
export interface FieldFlag {
  key: string;
  value: string;
  typed: boolean;
}

/** Split `key=value` at its first `=`; the key must not be empty. */
export function fieldFlag(text: string, typed: boolean): FieldFlag {
  const at = text.indexOf('=');
  const flag = typed ? '-F' : '-f';
  if (at < 0) throw new UsageError(`${flag} ${quoted(text)}: expected key=value`, { hint: `Example: ${flag} Name=Ada` });
  if (at === 0) throw new UsageError(`${flag} ${quoted(text)}: the key before "=" is empty`);
  return { key: text.slice(0, at), value: text.slice(at + 1), typed };
}

const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * A -F value as JSON, as gh converts it: `true`, `false`, `null` and numbers become those JSON values, anything
 * else stays a string (`@file` is read by the caller first). An integer past 2^53 is refused: as a JSON number it
 * would arrive changed.
 */
export function typedValue(key: string, value: string): unknown {
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (value === 'null') return null;
  if (!NUMBER.test(value)) return value;
  const parsed = Number(value);
  const integer = !/[.eE]/.test(value);
  if (!Number.isFinite(parsed) || (integer && !Number.isSafeInteger(parsed))) {
    throw new UsageError(`-F ${quoted(`${key}=${value}`)}: the number cannot be sent exactly as JSON`, { hint: `Send it as a string with -f ${key}=${value}, or write the body yourself and pass it with --input.` });
  }
  return parsed;
}

/** The fields as one JSON object (their values converted already), in the order given; a key given twice is refused. */
export function fieldObject(fields: Array<{ key: string; value: unknown }>): Record<string, unknown> {
  // No prototype: a key such as `__proto__` is a field like any other, and JSON.stringify writes it.
  const out = emptyRecord();
  for (const { key, value } of fields) {
    if (Object.hasOwn(out, key)) throw new UsageError(`the field ${quoted(key)} is given twice`, { hint: 'Give each key once; for arrays and objects, write the body yourself and pass it with --input.' });
    out[key] = value;
  }
  return out;
}

/** A request's place on the service: the encoded path (after the base URL's own path) and the query. */
export interface Target {
  path: string;
  query: URLSearchParams;
}

/** Replace `{board}` by the board's id, percent-encoded; any other `{name}` is refused (a typo would be sent as it is). */
function fillPlaceholders(input: string, boardId: string): string {
  return input.replace(/\{([^{}]*)\}/g, (whole, name: string) => {
    if (name === 'board') return encodeURIComponent(boardId);
    throw new UsageError(`unknown placeholder ${quoted(whole)} in the path`, { hint: 'The only placeholder is {board}, the selected board\'s id; write a literal "{" as %7B.' });
  });
}

/**
 * Where `input` points on the service at `baseUrl`: `{board}` filled in, a path with an optional query (a leading
 * `/` may be left out), or a full URL on the base URL itself. The token goes with every request, so anything that
 * would leave the base URL is refused before a request is made: another scheme, host or port, a user:password,
 * `..` segments climbing out of the base URL's path. A fragment is refused (it is never sent).
 */
export function resolveTarget(input: string, baseUrl: string, boardId: string): Target {
  const base = new URL(baseUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  const filled = fillPlaceholders(input.trim(), boardId);
  if (filled.includes('#')) throw new UsageError(`the path ${quoted(input)} holds a "#"`, { hint: 'A fragment is never sent; write a "#" inside an id as %23.' });
  const absolute = /^[a-z][a-z\d+.-]*:/i.test(filled);
  if (!absolute && /^[/\\]{2}/.test(filled)) {
    throw new UsageError(`the path ${quoted(input)} starts with "//", which names another host`, { hint: "Give a path on the base URL, e.g. '/api/aptlet/{board}'." });
  }
  let url: URL;
  try {
    // A path is put after the base URL's origin and path as it is, so nothing in it can name another host.
    url = new URL(absolute ? filled : `${base.origin}${prefix}${filled.startsWith('/') ? '' : '/'}${filled}`);
  } catch {
    throw new UsageError(`not a valid path or URL: ${quoted(input)}`);
  }
  const within = url.pathname === prefix || url.pathname.startsWith(`${prefix}/`);
  if (url.origin !== base.origin || url.username !== '' || url.password !== '' || !within) {
    // A URL of no origin (`file:`, `mailto:`) is shown as typed up to its query.
    const where = url.origin === 'null' ? url.href.replace(/[?#].*$/s, '') : url.origin !== base.origin ? url.origin : `${url.origin}${url.pathname}`;
    throw new UsageError(`refusing to send the board's token to ${quoted(where)}: it is not on the base URL ${base.origin}${prefix}`, {
      hint: "Give a path on the base URL, e.g. '/api/aptlet/{board}'; to reach another service, use another base URL (--base-url).",
    });
  }
  return { path: url.pathname.slice(prefix.length) || '/', query: url.searchParams };
}

/** Whether `text` holds `secret`: anywhere for a secret of 8+ characters, else as the whole text (`t` is in too many words). */
function holds(text: string, secret: string): boolean {
  return secret !== '' && (secret.length >= MIN_SUBSTRING_SECRET ? text.includes(secret) : text === secret);
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * Refuse a path or query that carries a secret (spec 5: the token goes in x-token, which cardboard sets itself):
 * a URL is logged by servers and proxies and shown in cardboard's own messages.
 */
export function refuseSecretsInUrl(target: Target, secrets: Iterable<string>): void {
  // The path whole as well as each segment: a long secret may hold a `/` and span segments; a short one
  // counts only as a whole segment or query part.
  const parts = [decoded(target.path), ...target.path.split('/').map(decoded), ...[...target.query].flat()];
  for (const secret of secrets) {
    if (parts.some((part) => holds(part, secret))) {
      throw new UsageError('the path or query holds the token (or another stored secret); it is never sent in a URL', {
        hint: 'cardboard sends the token in the x-token header of every request itself (spec 5): leave it out of the path.',
      });
    }
  }
}
