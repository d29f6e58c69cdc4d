import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodeBody } from '../../src/http/body.js';
import { extractServerMessage } from '../../src/http/message.js';

describe('decodeBody', () => {
  const text = '[{"_id":"ü"}]';
  it('undoes gzip, deflate and br, and stacked codings last-applied first', () => {
    expect(decodeBody(gzipSync(text), 'gzip')).toBe(text);
    expect(decodeBody(deflateSync(text), 'deflate')).toBe(text);
    expect(decodeBody(brotliCompressSync(text), 'br')).toBe(text);
    expect(decodeBody(gzipSync(deflateSync(text)), 'deflate, gzip')).toBe(text);
    expect(decodeBody(Buffer.from(text), undefined)).toBe(text);
    expect(decodeBody(Buffer.from(text), 'identity')).toBe(text);
  });
  it('drops a byte order mark and leaves an empty body empty', () => {
    expect(decodeBody(Buffer.from(`\uFEFF${text}`), undefined)).toBe(text);
    expect(decodeBody(Buffer.alloc(0), 'gzip')).toBe('');
  });
  it('refuses an unknown coding and a corrupt body with a code the core can name', () => {
    expect(() => decodeBody(Buffer.from('x'), 'zstd')).toThrow(expect.objectContaining({ code: 'EUNSUPPORTED_ENCODING' }));
    expect(() => decodeBody(Buffer.from('not gzip'), 'gzip')).toThrow(expect.objectContaining({ code: 'Z_DATA_ERROR' }));
  });
});

describe('server messages', () => {
  it('prefers the message over a bare reason phrase (Fastify/hapi bodies)', () => {
    expect(extractServerMessage('{"statusCode":404,"error":"Not Found","message":"No card 42"}', 'application/json')).toBe('No card 42');
    expect(extractServerMessage('{"error":"Not Found"}', 'application/json')).toBe('Not Found');
    expect(extractServerMessage('{"errors":[{"message":"Title is required"}]}', 'application/json')).toBe('Title is required');
    expect(extractServerMessage('{"error":"bad token","message":"ignored"}', 'application/json')).toBe('bad token');
  });
  it('escapes terminal escape sequences and control characters as every line for a person does', () => {
    expect(extractServerMessage('a\u001b[31mred\u001b[0m b\u001b]0;title\u0007c\u0000d\u009be', 'text/plain')).toBe('a\\e[31mred\\e[0m b\\e]0;title\\ac\\x00d\\x9be');
    expect(extractServerMessage('<html><title>x&#27;[2Jy</title></html>', 'text/html')).toBe('x\\e[2Jy');
  });
});
