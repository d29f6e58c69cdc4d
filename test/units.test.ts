import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/errors.js';
import { durationOf, formatBytes, formatDuration, MAX_DURATION_MS, parseDuration, parsePort, parseRate, parseSize, readDuration } from '../src/units.js';

/** The UsageError `fn` throws (fails the test if it throws nothing or something else). */
function usageError(fn: () => unknown): UsageError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).exitCode).toBe(2);
    return err as UsageError;
  }
  throw new Error('expected a UsageError');
}

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['30sec', 30_000],
    ['2m', 120_000],
    ['2min', 120_000],
    ['1h', 3_600_000],
    ['1h30m', 5_400_000],
    ['1m30s', 90_000],
    ['2s500ms', 2500],
    ['1h0m1s', 3_601_000],
    ['1.5s', 1500],
    ['0.5h', 1_800_000],
    ['1.0005s', 1001],
    ['1H', 3_600_000],
    ['30 s', 30_000],
    [' 1h 30m ', 5_400_000],
    ['596h31m23.647s', MAX_DURATION_MS],
  ])('%j → %d ms', (text, ms) => expect(parseDuration(text, '--timeout')).toBe(ms));

  it('refuses a bare number with the units to add', () => {
    const err = usageError(() => parseDuration('30', '--timeout'));
    expect(err.message).toBe('--timeout 30 has no unit');
    expect(err.hint).toBe('Write 30s for seconds, 30m for minutes or 30ms.');
  });

  it.each(['', 's', 'soon', '10x', '-5s', '1mins', '1hr', '30m1h', '1m2m', '1.s', '.5s', '1e3ms', '1h-30m', '5 0s'])(
    'refuses %j naming the flag, the value and an example',
    (text) => {
      const err = usageError(() => parseDuration(text, '--give-up-after'));
      expect(err.message).toBe(`--give-up-after ${JSON.stringify(text)} is not a duration`);
      expect(err.hint).toContain('30s');
    },
  );

  it('refuses 0 and what rounds to 0', () => {
    expect(usageError(() => parseDuration('0s', '--timeout')).message).toBe('--timeout 0s must be at least 1ms');
    expect(usageError(() => parseDuration('0.4ms', '--timeout')).message).toBe('--timeout 0.4ms must be at least 1ms');
  });

  it('refuses what a timer cannot hold (more than 2^31-1 ms), and digits that overflow a number', () => {
    expect(parseDuration('596h', '--timeout')).toBe(596 * 3_600_000);
    const err = usageError(() => parseDuration('597h', '--timeout'));
    expect(err.message).toBe('--timeout 597h is too long: the limit is 24 days (596h31m23.647s)');
    expect(usageError(() => parseDuration('596h31m23.648s', '--timeout')).message).toContain('too long');
    expect(usageError(() => parseDuration(`${'9'.repeat(400)}s`, '--timeout')).message).toContain('too long');
  });

  it('quotes a value with control characters instead of printing them', () => {
    const err = usageError(() => parseDuration('\u001b[2J', '--timeout'));
    expect(err.message).toBe('--timeout "\\u001b[2J" is not a duration');
  });
});

describe('formatDuration', () => {
  it.each([
    [500, '500ms'],
    [1000, '1s'],
    [1500, '1.5s'],
    [30_000, '30s'],
    [90_000, '1m30s'],
    [120_000, '2m'],
    [3_600_000, '1h'],
    [5_400_000, '1h30m'],
    [3_600_500, '1h500ms'],
    [61_001, '1m1.001s'],
    [0, '0ms'],
  ])('%d ms → %s', (ms, text) => expect(formatDuration(ms)).toBe(text));

  it('shows a duration read from a flag as the user wrote it (`30s`, not `30000 ms`)', () => {
    expect(readDuration(' 90s ', '--forward-timeout')).toEqual({ ms: 90_000, text: '90s' });
    expect(formatDuration(readDuration('90s', '--forward-timeout'))).toBe('90s');
    expect(formatDuration(readDuration('1500ms', '--x'))).toBe('1500ms');
    expect(formatDuration(readDuration('2min', '--x'))).toBe('2min');
    expect(formatDuration(durationOf(90_000))).toBe('1m30s');
    expect(() => readDuration('30', '--forward-timeout')).toThrow('--forward-timeout 30 has no unit');
  });

  it('reads back to the same milliseconds for every duration a flag accepts', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: MAX_DURATION_MS }), (ms) => {
        expect(parseDuration(formatDuration(ms), '--timeout')).toBe(ms);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('parseRate', () => {
  it.each([
    ['2/s', 2],
    ['2/sec', 2],
    ['2/second', 2],
    ['120/min', 2],
    ['120/m', 2],
    ['120/minute', 2],
    ['7200/h', 2],
    ['7200/hour', 2],
    ['0.5/s', 0.5],
    ['1/h', 1 / 3600],
    ['30 / MIN', 0.5],
  ])('%j → %d per second', (text, perSecond) => expect(parseRate(text, '--rate')).toBeCloseTo(perSecond, 12));

  it('refuses a bare number as ambiguous', () => {
    const err = usageError(() => parseRate('2', '--rate'));
    expect(err.message).toBe('--rate 2 is ambiguous: write 2/s or 2/min');
  });

  it.each(['', 'lots', '2/', '/s', '2/d', '2/hours', '-2/s', '2 per s', '2/s/s'])('refuses %j naming the flag and an example', (text) => {
    const err = usageError(() => parseRate(text, '--rate-limit'));
    expect(err.message).toBe(`--rate-limit ${JSON.stringify(text)} is not a rate`);
    expect(err.hint).toContain('120/min');
  });

  it('refuses 0, a rate slower than one request per 24 days, and an overflowing number', () => {
    expect(usageError(() => parseRate('0/s', '--rate')).message).toBe('--rate 0/s must be more than 0');
    expect(usageError(() => parseRate('0.00001/h', '--rate')).message).toContain('too slow');
    expect(parseRate('0.01/h', '--rate')).toBeCloseTo(0.01 / 3600, 15);
    expect(usageError(() => parseRate(`${'9'.repeat(400)}/s`, '--rate')).message).toContain('too large');
  });
});

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
  ])('%s → %d bytes', (text, bytes) => expect(parseSize(text, '--max-body')).toBe(bytes));

  it.each(['', 'mb', '1tb', '-1mb', '1 m b', 'abc', '0', '0.1b', `${'9'.repeat(400)}gb`])('refuses %j naming the flag', (text) => {
    expect(usageError(() => parseSize(text, '--max-body')).message).toMatch(/^--max-body: /);
  });
});

describe('parsePort and formatBytes', () => {
  it('reads ports 0-65535 only, naming the flag', () => {
    expect(parsePort('0')).toBe(0);
    expect(parsePort('8787')).toBe(8787);
    expect(parsePort('65535')).toBe(65_535);
    expect(usageError(() => parsePort('65536')).message).toBe('--port: "65536" is not a port number (0-65535)');
    expect(usageError(() => parsePort('80a', '--listen-port')).message).toMatch(/^--listen-port: /);
    expect(() => parsePort('-1')).toThrow(UsageError);
    expect(() => parsePort('')).toThrow(UsageError);
  });

  it('prints sizes for people', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 kB');
    expect(formatBytes(3 * 1024 * 1024)).toBe('3.0 MB');
  });
});
