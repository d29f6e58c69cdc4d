import { describe, expect, it } from 'vitest';
import { notice, noticeText } from '../../src/io/notice.js';
import { Secrets } from '../../src/redact.js';
import { BufferStream } from './buffers.js';

describe('notice: the one way a line for a person is made', () => {
  it('redacts before it escapes: a secret holding a control character is still found', () => {
    const secrets = new Secrets(['tok\u0007secret-1']);
    // Escaped first, the secret would read `tok\asecret-1` and no longer match.
    expect(noticeText(secrets, 'refused tok\u0007secret-1 \u001b[2J')).toBe('refused *** \\e[2J');
  });

  it('writes one line on stderr; silent under --quiet unless it must be said', () => {
    const secrets = new Secrets();
    const stderr = new BufferStream();
    notice({ stderr, secrets, globals: { quiet: true } }, 'a note');
    notice({ stderr, secrets, globals: { quiet: true } }, 'an error', { always: true });
    notice({ stderr, secrets, globals: {} }, 'another note');
    notice({ stderr, secrets }, 'without globals, said');
    expect(stderr.text).toBe('an error\nanother note\nwithout globals, said\n');
  });

  it("keeps line breaks only when asked, and puts cardboard's own prefix before the escaped text as it is", () => {
    const secrets = new Secrets();
    expect(noticeText(secrets, 'one\ntwo')).toBe('one\\ntwo');
    expect(noticeText(secrets, 'one\r\ntwo', { keepNewlines: true })).toBe('one\ntwo');
    expect(noticeText(secrets, 'x\u001b', { prefix: '\u001b[33mwarning:\u001b[39m ' })).toBe('\u001b[33mwarning:\u001b[39m x\\e');
  });
});

describe('Secrets: the run registry and its reading side', () => {
  it('the reader reads what is added later, and cannot add', () => {
    const secrets = new Secrets();
    const reader = secrets.reader;
    expect(reader.redact('key sk-abcdefgh')).toBe('key sk-abcdefgh');
    secrets.add('sk-abcdefgh');
    expect(reader.redact('key sk-abcdefgh')).toBe('key ***');
    expect(reader.redactValue({ k: 'sk-abcdefgh' })).toEqual({ k: '***' });
    expect([...reader]).toEqual(['sk-abcdefgh']);
    expect('add' in reader).toBe(false);
    expect(Object.isFrozen(reader)).toBe(true);
  });
});
