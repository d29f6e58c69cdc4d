import { UsageError } from '../../errors.js';
import { refusePlainHttp } from '../../http/url.js';

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
