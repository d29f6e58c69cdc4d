import { UsageError } from '../../errors.js';

/** Check that a flag's value is an http(s) URL; returns it unchanged. */
export function httpUrl(value: string, flag: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${flag}: not a URL: ${value}`, { hint: 'Give a full URL, e.g. http://localhost:3000/webhooks.' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${flag}: only http:// and https:// URLs are supported: ${value}`);
  return value;
}
