import { UsageError } from '../errors.js';

/**
 * Build a path with every interpolated value encodeURIComponent'd:
 * path`/api/aptlet/${board}/card/${id}`. Ids come from users and files, so a `/`, `?` or `#`
 * inside one must never change which resource is addressed.
 */
export function path(strings: TemplateStringsArray, ...params: Array<string | number>): string {
  let out = strings[0]!;
  params.forEach((param, i) => {
    out += encodeURIComponent(String(param)) + strings[i + 1]!;
  });
  return out;
}

/** Join a base URL (which may carry a path prefix) with an encoded path and a query (URLSearchParams: every pair, in order). */
export function joinUrl(baseUrl: string, encodedPath: string, query?: Record<string, string | number> | URLSearchParams): string {
  const url = new URL(baseUrl);
  url.search = '';
  url.hash = '';
  const prefix = url.pathname.replace(/\/+$/, '');
  url.pathname = prefix + (encodedPath.startsWith('/') ? encodedPath : `/${encodedPath}`);
  if (query instanceof URLSearchParams) {
    if (query.size > 0) url.search = query.toString();
  } else for (const [key, value] of Object.entries(query ?? {})) url.searchParams.set(key, String(value));
  return url.toString();
}

/** The URL as shown to a user: without any user:password part. */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return url;
  }
}

/** True for localhost, *.localhost, 127.0.0.0/8 and ::1: traffic that never leaves the machine. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (host === '::1' || host === '0:0:0:0:0:0:0:1') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * The one rule for secrets over plain http: a secret (the token, spec 5; the signing key,
 * spec 6) goes over http:// only to loopback, where it never leaves the machine, unless `insecure`
 * (--insecure). Throws a UsageError (exit 2) naming `what` would cross the network; nothing is sent.
 */
function refusePlainHttp(url: URL, insecure: boolean | undefined, what: string, flag?: string): void {
  if (url.protocol === 'http:' && !insecure && !isLoopbackHost(url.hostname)) {
    throw new UsageError(`Refusing plain http:// to ${url.host}${flag ? ` (${flag})` : ''}: ${what} would cross the network unencrypted.`, {
      hint: 'Use https://, or pass --insecure if you really mean it.',
    });
  }
}

/**
 * Check that a flag's value is an http(s) URL; returns it unchanged. With `signed`, the request will carry
 * the signing key: plain http:// then only to loopback unless --insecure (the rule `board add` applies to the token).
 */
export function httpUrl(value: string, flag: string, signed?: { insecure: boolean | undefined }): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${flag}: not a URL: ${value}`, { hint: 'Give a full URL, e.g. http://localhost:3000/webhooks.' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${flag}: only http:// and https:// URLs are supported: ${value}`);
  if (signed) refusePlainHttp(url, signed.insecure, 'the signing key', flag);
  return value;
}

/** A URL as typed, for an error message: without user:password, query or fragment, parsable or not. */
function shownAsTyped(raw: string): string {
  return raw.replace(/^([a-z][a-z\d+.-]*:\/\/)[^/?#]*@/i, '$1').replace(/[?#].*$/s, '');
}

/**
 * Parse and check a base URL before anything is sent. Plain http:// to a host that is not
 * loopback is refused unless `insecure`: the token (spec 5) would cross the network in clear.
 * The result has no user:password, query or fragment: none is ever sent (spec 5: the token is a
 * header), and a pasted one may be a secret that would otherwise be stored and printed.
 */
export function checkBaseUrl(raw: string, insecure = false): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`Invalid base URL: ${shownAsTyped(raw)}`, { hint: 'Pass an absolute URL such as https://cards.example.com' });
  }
  url.username = '';
  url.password = '';
  url.search = '';
  url.hash = '';
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UsageError(`Unsupported base URL scheme ${url.protocol} in ${shownAsTyped(raw)}`, {
      hint: 'Use an https:// URL.',
    });
  }
  refusePlainHttp(url, insecure, 'the token');
  return url.toString().replace(/\/+$/, '');
}
