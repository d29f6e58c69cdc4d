// The pure parts of `cardboard api`: its words and flags into options, where a path points (and what is refused
// before anything is sent), -F's types, the terminal layout of JSON and the --include head.
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { type ApiOptions, apiCommand, methodSent } from '../../src/commands/api/api.js';
import { fieldFlag, fieldObject, methodAndPath, refuseSecretsInUrl, resolveTarget, typedValue } from '../../src/commands/api/plan.js';
import { bodyFor, headText, indentJson } from '../../src/commands/api/render.js';
import { UsageError } from '../../src/errors.js';
import { scrubBytes, Secrets } from '../../src/redact.js';
import { testContext } from '../io/buffers.js';

async function parse(argv: string[]): Promise<ApiOptions> {
  const { ctx } = testContext();
  const program = new Command('cardboard').exitOverride().configureOutput({ writeOut: () => {}, writeErr: () => {} });
  let seen: ApiOptions | undefined;
  apiCommand(program, () => ctx, async (_ctx, opts) => {
    seen = opts;
  });
  await program.parseAsync(['api', ...argv], { from: 'user' });
  if (seen === undefined) throw new Error('run was not called');
  return seen;
}

const refused = async (argv: string[]) => parse(argv).then(() => undefined, (e: unknown) => (e instanceof UsageError ? e.message : e));

describe('cardboard api parsing', () => {
  it('METHOD PATH, or PATH alone; -f strings and -F typed fields in order; the switches', async () => {
    expect(await parse(['get', '/api/x', '-f', 'a=1=2', '-F', 'b=3', '-i'])).toEqual({
      method: 'GET',
      path: '/api/x',
      fields: [
        { key: 'a', value: '1=2', typed: false },
        { key: 'b', value: '3', typed: true },
      ],
      input: undefined,
      include: true,
      paginate: false,
    });
    const alone = await parse(['/api/x']);
    expect(alone.method).toBeUndefined();
    expect(methodSent(alone)).toBe('GET');
    expect(methodSent(await parse(['/api/x', '-f', 'a=b']))).toBe('POST');
    expect(methodSent(await parse(['/api/x', '--input', 'f.json']))).toBe('POST');
    expect(methodSent(await parse(['/api/x', '-f', 'a=b', '--paginate']))).toBe('GET');
    expect(methodSent(await parse(['-X', 'delete', '/api/x']))).toBe('DELETE');
    expect((await parse(['PUT', '/api/x', '--method', 'put'])).method).toBe('PUT');
  });

  it('refuses what cannot be sent, naming it', async () => {
    expect(await refused(['FETCH', '/api/x'])).toBe('METHOD: unknown method "FETCH"');
    expect(await refused(['-X', 'TRACE', '/api/x'])).toBe('--method: unknown method "TRACE"');
    expect(await refused(['GET'])).toBe('missing the path after GET');
    expect(await refused(['GET', '/x', '-X', 'POST'])).toBe('the method is given twice: GET and --method POST');
    expect(await refused(['/x', '-f', 'novalue'])).toBe('-f "novalue": expected key=value');
    expect(await refused(['/x', '-F', '=v'])).toBe('-F "=v": the key before "=" is empty');
    expect(await refused(['POST', '/x', '--paginate'])).toBe('--paginate reads pages with GET, not POST');
    expect(await refused(['/x', '--paginate', '-i'])).toBe('--include shows one answer; with --paginate, --verbose logs each page');
    expect(await refused(['GET', '/x', '--input', 'f'])).toBe('--input sends a body, and a GET has none');
    expect(await refused(['POST', '/x', '--input', '-', '-F', 'a=@-'])).toBe('stdin can be read once: by --input - or by one -F key=@-');
  });

  it('methodAndPath: a lone word with a slash is a path even when it starts like a method', () => {
    expect(methodAndPath(['get/x'], undefined)).toEqual({ method: undefined, path: 'get/x' });
    expect(fieldFlag('k=', false)).toEqual({ key: 'k', value: '', typed: false });
  });
});

describe('-F values', () => {
  it('true, false, null and numbers become JSON; anything else stays a string', () => {
    expect(['true', 'false', 'null', '0', '-3', '2.5', '1e3', '007', '1.', 'True', '0x10', ''].map((v) => typedValue('k', v))).toEqual([true, false, null, 0, -3, 2.5, 1000, '007', '1.', 'True', '0x10', '']);
  });
  it('an integer a double cannot hold is refused rather than sent changed', () => {
    expect(() => typedValue('Id', '12345678901234567')).toThrow('-F "Id=12345678901234567": the number cannot be sent exactly as JSON');
    expect(typedValue('Id', '9007199254740991')).toBe(9007199254740991);
  });
  it('fieldObject: keys as given, __proto__ a plain key; a key twice is refused', () => {
    const body = fieldObject([
      { key: '__proto__', value: 1 },
      { key: 'Name', value: 'x' },
    ]);
    expect(JSON.stringify(body)).toBe('{"__proto__":1,"Name":"x"}');
    expect(() => fieldObject([{ key: 'a', value: 1 }, { key: 'a', value: 2 }])).toThrow('the field "a" is given twice');
  });
});

describe('where a path points', () => {
  const base = 'https://cards.example.com/svc';
  const target = (input: string) => {
    const t = resolveTarget(input, base, 'b 1/é');
    return `${t.path}${t.query.size ? `?${t.query}` : ''}`;
  };
  const refusal = (input: string) => {
    try {
      resolveTarget(input, base, 'b1');
      return 'sent';
    } catch (e) {
      return (e as Error).message;
    }
  };

  it('a path after the base URL, {board} percent-encoded, the query kept', () => {
    expect(target('/api/aptlet/{board}')).toBe('/api/aptlet/b%201%2F%C3%A9');
    expect(target('api/aptlet/{board}/schema?x=1&x=2')).toBe('/api/aptlet/b%201%2F%C3%A9/schema?x=1&x=2');
    expect(target('/api/card/a%2Fb/comment')).toBe('/api/card/a%2Fb/comment');
    expect(target('/api/./x/../y')).toBe('/api/y');
    expect(target('https://cards.example.com/svc/api/aptlet/{board}?page=2')).toBe('/api/aptlet/b%201%2F%C3%A9?page=2');
  });

  it('anything that would take the token elsewhere is refused before a request is made', () => {
    expect(refusal('https://evil.example/api')).toBe('refusing to send the board\'s token to "https://evil.example": it is not on the base URL https://cards.example.com/svc');
    expect(refusal('http://cards.example.com/svc/api')).toMatch(/^refusing to send the board's token to "http:\/\/cards\.example\.com"/);
    expect(refusal('https://cards.example.com:8443/svc/api')).toMatch(/to "https:\/\/cards\.example\.com:8443"/);
    expect(refusal('https://u:p@cards.example.com/svc/api')).toMatch(/^refusing/);
    expect(refusal('https://cards.example.com/other/api')).toMatch(/to "https:\/\/cards\.example\.com\/other\/api"/);
    expect(refusal('https://cards.example.com/svcx/api')).toMatch(/^refusing/);
    expect(refusal('/../x')).toMatch(/to "https:\/\/cards\.example\.com\/x"/);
    expect(refusal('/%2e%2e/x')).toMatch(/^refusing/);
    expect(refusal('/api\\..\\..\\x')).toMatch(/^refusing/);
    expect(refusal('//evil.example/api')).toBe('the path "//evil.example/api" starts with "//", which names another host');
    expect(refusal('\\\\evil.example/api')).toMatch(/starts with "\/\/"/);
    expect(refusal('file:///etc/passwd')).toBe('refusing to send the board\'s token to "file:///etc/passwd": it is not on the base URL https://cards.example.com/svc');
    expect(refusal('/api/x#frag')).toBe('the path "/api/x#frag" holds a "#"');
    expect(refusal('/api/{card}')).toBe('unknown placeholder "{card}" in the path');
  });

  it('a secret in the path or query is refused: anywhere for a long one, as a whole part for a short one', () => {
    const check = (input: string, secrets: string[]) => {
      try {
        refuseSecretsInUrl(resolveTarget(input, base, 'b1'), secrets);
        return 'ok';
      } catch (e) {
        return (e as Error).message;
      }
    };
    const message = 'the path or query holds the token (or another stored secret); it is never sent in a URL';
    expect(check('/api/x?t=abc-secret-123', ['abc-secret-123'])).toBe(message);
    expect(check('/api/x?t=abc%2Dsecret-123xyz', ['abc-secret-123'])).toBe(message);
    expect(check('/api/abc-secret-123', ['abc-secret-123'])).toBe(message);
    expect(check('/api/abc/secret-123/x', ['abc/secret-123'])).toBe(message);
    expect(check('/api/abc%2Fsecret-123', ['abc/secret-123'])).toBe(message);
    expect(check('/api/x?abc-secret-123=1', ['abc-secret-123'])).toBe(message);
    expect(check('/api/t?t=1', ['t'])).toBe(message);
    expect(check('/api/token?type=t2', ['t'])).toBe('ok');
  });
});

describe('showing an answer', () => {
  it('indentJson lays out JSON as JSON.stringify(v, null, 2) does', () => {
    for (const value of [{ a: [1, { b: 'x,y:{}' }], c: {}, d: [], e: 'q"\\"' }, [], 'str', 12, null, [[[]]]]) {
      expect(indentJson(JSON.stringify(value))).toBe(JSON.stringify(value, null, 2));
    }
    expect(indentJson(' { "a" : [ 1 , 2 ] ,\n "b" : { } } ')).toBe('{\n  "a": [\n    1,\n    2\n  ],\n  "b": {}\n}');
  });
  it('indentJson keeps numbers and escapes as written: nothing is parsed and written again', () => {
    expect(indentJson('{"id":12345678901234567890,"x":1.50,"s":"\\u00e9"}')).toBe('{\n  "id": 12345678901234567890,\n  "x": 1.50,\n  "s": "\\u00e9"\n}');
  });
  it('bodyFor: bytes as they came on a pipe; on a terminal JSON indented and escaped, text escaped with a newline', () => {
    // JSON holds no raw ESC (a string escapes it); a raw U+202E it may hold.
    const bytes = Buffer.from('{"a":"\\u001b[2J\u202e"}');
    expect(bodyFor({ isTTY: false }, bytes)).toBe(bytes);
    expect(bodyFor({ isTTY: true }, bytes)).toBe('{\n  "a": "\\u001b[2J\\u202e"\n}\n');
    expect(bodyFor({ isTTY: true }, Buffer.from('plain \u001b]0;x\u0007 text'))).toBe('plain \\e]0;x\\a text\n');
    expect(bodyFor({ isTTY: true }, Buffer.from('{"raw":"\u001b"}'))).toBe('{"raw":"\\e"}\n');
    expect(bodyFor({ isTTY: true }, Buffer.alloc(0))).toEqual(Buffer.alloc(0));
  });
  it('headText: the status line, names in order, credentials masked, secrets redacted, a blank line', () => {
    const text = headText({ secrets: new Secrets(['secret-token-1']) }, 404, {
      'x-echo': 'got secret-token-1',
      'content-type': 'application/json',
      'set-cookie': ['sid=abc', 'b=2'],
      'x-token': 'anything',
      'x-odd': 'a\u001b[2Jb',
    });
    expect(text).toBe('HTTP/1.1 404 Not Found\nContent-Type: application/json\nSet-Cookie: ***\nX-Echo: got ***\nX-Odd: a\\e[2Jb\nX-Token: ***\n\n');
  });
  it('scrubBytes: text scrubbed as text; other bytes only of a long secret', () => {
    expect(scrubBytes(Buffer.from('{"e":"bad tok-1234567"}'), 'tok-1234567').toString()).toBe('{"e":"bad ***"}');
    expect(scrubBytes(Buffer.from('token t here'), 't').toString()).toBe('token *** here');
    const binary = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('tok-1234567'), Buffer.from([0x80])]);
    expect(scrubBytes(binary, 'tok-1234567')).toEqual(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('***'), Buffer.from([0x80])]));
    const plain = Buffer.from('nothing here');
    expect(scrubBytes(plain, 'tok-1234567')).toBe(plain);
  });
});
