// Plain HTTP calls for the emulator's tests: global fetch, nothing mocked.
import type { RunningEmulator } from '../helpers/emulator.js';

export interface Answer {
  status: number;
  headers: Headers;
  json: unknown;
  text: string;
}

export interface CallOptions {
  token?: string;
  /** Sent as JSON unless it is already a string. */
  body?: unknown;
  contentType?: string | null;
}

/** One request to the emulator; resolves with status, headers and the decoded body. */
export async function call(emu: RunningEmulator, method: string, path: string, opts: CallOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (opts.token !== undefined) headers['x-token'] = opts.token;
  if (opts.body !== undefined && opts.contentType !== null) headers['content-type'] = opts.contentType ?? 'application/json';
  const res = await fetch(emu.url + path, {
    method,
    headers,
    body: opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}
