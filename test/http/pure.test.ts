import { describe, expect, it } from 'vitest';
import { ApiError, UsageError } from '../../src/errors.js';
import { extractServerMessage, htmlToText, parseRetryAfter } from '../../src/http/message.js';
import { checkBaseUrl, displayUrl, isLoopbackHost, joinUrl, path } from '../../src/http/url.js';

describe('URL building', () => {
  it('encodes every path parameter so ids cannot change the resource', () => {
    expect(path`/api/aptlet/${'a/b'}/card/${'x?y#z %'}`).toBe('/api/aptlet/a%2Fb/card/x%3Fy%23z%20%25');
  });

  it('joins a base URL with a prefix, trailing slash or not, and sets the query', () => {
    expect(joinUrl('https://h.example/prefix/', '/api/aptlet/b', { page: 0 })).toBe('https://h.example/prefix/api/aptlet/b?page=0');
    expect(joinUrl('https://h.example', '/api/x')).toBe('https://h.example/api/x');
    expect(joinUrl('https://h.example/p?q=1#f', '/api/x')).toBe('https://h.example/p/api/x');
  });

  it('hides user:password in displayed URLs', () => {
    expect(displayUrl('https://u:secret@h.example/x')).toBe('https://h.example/x');
  });

  it('knows loopback hosts', () => {
    for (const h of ['localhost', 'api.localhost', '127.0.0.1', '127.9.8.7', '[::1]', '::1']) expect(isLoopbackHost(h)).toBe(true);
    for (const h of ['example.com', '10.0.0.1', '128.0.0.1', 'localhost.example.com']) expect(isLoopbackHost(h)).toBe(false);
  });

  it('refuses plain http:// off loopback unless insecure, and other schemes always', () => {
    expect(() => checkBaseUrl('http://cards.example.com')).toThrow(UsageError);
    expect(checkBaseUrl('http://cards.example.com/', true)).toBe('http://cards.example.com');
    expect(checkBaseUrl('http://127.0.0.1:8080/')).toBe('http://127.0.0.1:8080');
    expect(checkBaseUrl('https://cards.example.com/base/')).toBe('https://cards.example.com/base');
    expect(() => checkBaseUrl('ftp://cards.example.com', true)).toThrow(UsageError);
    expect(() => checkBaseUrl('not a url')).toThrow(UsageError);
  });
});

describe('server message extraction', () => {
  it('reads the common JSON shapes', () => {
    expect(extractServerMessage('{"error":"bad token"}', 'application/json')).toBe('bad token');
    expect(extractServerMessage('{"reason":"no such board"}', 'application/json')).toBe('no such board');
    expect(extractServerMessage('{"message":"slow down"}', 'application/json; charset=utf-8')).toBe('slow down');
    expect(extractServerMessage('{"error":{"message":"nested"}}', 'application/json')).toBe('nested');
    expect(extractServerMessage('"just a string"', 'application/json')).toBe('just a string');
  });

  it('falls back to text for JSON without a message and for plain text', () => {
    expect(extractServerMessage('{"code":7}', 'application/json')).toBe('{"code":7}');
    expect(extractServerMessage('  Not\n found  ', 'text/plain')).toBe('Not found');
    expect(extractServerMessage('', 'text/plain')).toBeUndefined();
  });

  it('turns an HTML page into one clean line, preferring the title', () => {
    const page = '<html><head><title>502 Bad Gateway</title><style>b{}</style></head><body><h1>502</h1></body></html>';
    expect(extractServerMessage(page, 'text/html')).toBe('502 Bad Gateway');
    const untitled = '<!DOCTYPE html><html><body><script>var x=1</script><p>Board &amp; card\n\n  gone</p></body></html>';
    expect(extractServerMessage(untitled, '')).toBe('Board & card gone');
  });

  it('truncates a long message to about 200 characters', () => {
    const text = htmlToText(`<p>${'word '.repeat(200)}</p>`);
    expect(text.length).toBe(200);
    expect(text.endsWith('…')).toBe(true);
  });
});

describe('Retry-After', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  it('parses seconds and HTTP dates', () => {
    expect(parseRetryAfter('7', now)).toBe(7);
    expect(parseRetryAfter(['3', '9'], now)).toBe(3);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:12 GMT', now)).toBe(12);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:00:00 GMT', now)).toBe(0);
  });
  it('ignores absent and invalid values', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('-1', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });
});

describe('ApiError exit codes', () => {
  it('maps 401/403 to exit 4 and others to 1', () => {
    expect(new ApiError('x', { method: 'GET', url: 'u', status: 401 }).exitCode).toBe(4);
    expect(new ApiError('x', { method: 'GET', url: 'u', status: 404 }).exitCode).toBe(1);
  });
});
