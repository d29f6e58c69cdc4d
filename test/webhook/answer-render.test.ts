// The app's answer under a forward line (`listen --verbose`): bounded in headers and body lines, escaped.
import { describe, expect, it } from 'vitest';
import { answerLines, shownAnswer } from '../../src/commands/webhook/answer-render.js';

describe('answerLines', () => {
  it('shows 30 headers at most, then how many more, and 20 body lines at most, every line escaped', () => {
    const headers = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`x-h${i}`, i === 0 ? 'a\u001b[31mb' : String(i)]));
    const body = Buffer.from(Array.from({ length: 50 }, (_, i) => `line ${i}`).join('\n'));
    const lines = answerLines(shownAnswer({ status: 500, ms: 1, headers, body }, []));
    expect(lines[0]).toBe('      500 Internal Server Error');
    expect(lines[1]).toBe('      x-h0: a\\e[31mb');
    expect(lines.filter((l) => /^ {6}x-h\d+:/.test(l))).toHaveLength(30);
    expect(lines).toContain('      … 970 more headers (all of them in --json and the record file)');
    expect(lines.filter((l) => /^ {6}line \d+$/.test(l))).toHaveLength(20);
    expect(lines.at(-1)).toBe('      … (the rest of the body is not shown)');
    expect(lines.join('\n')).not.toContain('\u001b');
  });

  it('shows every header of an answer that has few, and nothing when no answer came', () => {
    const lines = answerLines(shownAnswer({ status: 200, ms: 1, headers: { 'content-type': 'text/plain' }, body: Buffer.from('ok') }, []));
    expect(lines).toEqual(['      200 OK', '      content-type: text/plain', '', '      ok']);
    expect(answerLines(shownAnswer({ ms: 1, body: Buffer.alloc(0), error: 'ECONNREFUSED' }, []))).toEqual([]);
  });
});
