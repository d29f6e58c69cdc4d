import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { formatBytes, parseDuration, parsePort, parseSize } from '../../src/webhook/units.js';

describe('parseSize', () => {
  it.each([
    ['1mb', 1024 * 1024],
    ['1MB', 1024 * 1024],
    ['512kb', 512 * 1024],
    ['512k', 512 * 1024],
    ['100b', 100],
    ['2048', 2048],
    ['1.5mb', 1.5 * 1024 * 1024],
    [' 2 kb ', 2048],
    ['1gb', 1024 ** 3],
  ])('%s → %d bytes', (text, bytes) => expect(parseSize(text)).toBe(bytes));

  it.each(['', 'mb', '1tb', '-1mb', '1 m b', 'abc', '0', '0.1b'])('refuses %j with a UsageError naming the flag', (text) => {
    expect(() => parseSize(text)).toThrow(UsageError);
    expect(() => parseSize(text)).toThrow(/--max-body/);
  });
});

describe('parseDuration', () => {
  it.each([
    ['30s', 30_000],
    ['500ms', 500],
    ['2m', 120_000],
    ['1h', 3_600_000],
    ['5', 5000],
    ['1.5s', 1500],
  ])('%s → %d ms', (text, ms) => expect(parseDuration(text, '--forward-timeout')).toBe(ms));

  it.each(['', 's', '10x', '-5s', '0s'])('refuses %j', (text) => {
    expect(() => parseDuration(text, '--forward-timeout')).toThrow(/--forward-timeout/);
  });
});

describe('parsePort and formatBytes', () => {
  it('reads ports 0-65535 only', () => {
    expect(parsePort('0')).toBe(0);
    expect(parsePort('8787')).toBe(8787);
    expect(() => parsePort('65536')).toThrow(UsageError);
    expect(() => parsePort('80a')).toThrow(UsageError);
  });

  it('prints sizes for people', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 kB');
    expect(formatBytes(3 * 1024 * 1024)).toBe('3.0 MB');
  });
});
