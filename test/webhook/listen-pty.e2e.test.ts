// `webhook listen` on a real pseudo-terminal: its lines and its --json show a delivery decoded, so a key
// spelled with JSON escapes is redacted there, and --json on the terminal writes bidi and C1 characters as
// \uXXXX escapes (still JSON) instead of raw.
import { describe, expect, it } from 'vitest';
import { startOnPty } from '../helpers/pty.js';
import { post } from './helpers.js';

const KEY = 'whsk-pty-secret-89ab';
const ESCAPED = 'whsk\\u002dpty-secret-89ab';
const RAW = /[\u007f-\u009f\u2028\u2029]|(?!\u200d)\p{Cf}/u;

describe('webhook listen on a terminal', () => {
  for (const json of [false, true]) {
    it(`${json ? '--json' : 'delivery lines'}: no decoded key, no raw bidi or C1 character`, async () => {
      const term = startOnPty(['webhook', 'listen', '--port', '0', ...(json ? ['--json'] : [])], { CARDBOARD_SIGNING_KEY: KEY, NO_COLOR: '1' }, { cols: 200 });
      const url = (await term.waitFor(/Listening on (\S+)/))[1]!;
      expect(await post(url, `{"_id":"c1","Note":"${ESCAPED}","Title":"evil\u202etxt csi\u009b31m"}`, KEY)).toBe(200);
      expect(await post(url, `{"n":1,"${ESCAPED}":"${ESCAPED}"}`, KEY)).toBe(200);
      await term.waitFor(json ? /"seq":2/ : /#2 {2}POST/);
      term.type('\u0003');
      expect(await term.ended).toEqual({ code: null, signal: 'SIGINT' });
      const screen = term.raw();
      expect(screen).not.toContain(KEY);
      expect(screen).not.toContain('pty-secret');
      expect(screen).not.toMatch(RAW);
      if (json) {
        const first = JSON.parse(screen.split(/\r?\n/).find((l) => l.startsWith('{"seq":1'))!) as { body: { Note: string; Title: string } };
        expect(first.body).toEqual({ _id: 'c1', Note: '***', Title: 'evil\u202etxt csi\u009b31m' });
      } else {
        expect(screen).toContain('Note=***');
        expect(screen).toContain('evil\\u202etxt');
      }
    });
  }
});
