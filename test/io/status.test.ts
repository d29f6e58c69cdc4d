import { describe, expect, it } from 'vitest';
import { createContext } from '../../src/context.js';
import { createStatus } from '../../src/io/status.js';
import { Secrets } from '../../src/redact.js';
import { testContext } from './buffers.js';

describe('createStatus', () => {
  it('writes info, success and warnings to stderr only', () => {
    const { ctx, stdout, stderr } = testContext();
    const s = createStatus(ctx);
    s.info('fetching');
    s.success('done');
    s.warn('careful');
    expect(stderr.text).toBe('fetching\nok: done\nwarning: careful\n');
    expect(stdout.text).toBe('');
  });
  it('keeps only warnings under --quiet', () => {
    const { ctx, stderr } = testContext({ quiet: true });
    const s = createStatus(ctx);
    s.info('fetching');
    s.success('done');
    s.warn('careful');
    expect(stderr.text).toBe('warning: careful\n');
  });
  it('colours on a TTY unless NO_COLOR', () => {
    const plain = testContext({ errTty: true });
    createStatus(plain.ctx).warn('w');
    expect(plain.stderr.text).toBe('warning: w\n');
    const coloured = testContext({ errTty: true, env: { NO_COLOR: undefined, TERM: 'xterm' } });
    createStatus(coloured.ctx).warn('w');
    expect(coloured.stderr.text).toBe('\u001b[33mwarning:\u001b[39m w\n');
  });
  it('redacts known secrets', () => {
    const secrets = new Secrets();
    const { parts, stderr } = testContext();
    secrets.add('tok-secret');
    createStatus(createContext({ ...parts, secrets })).warn('token tok-secret leaked');
    expect(stderr.text).toBe('warning: token *** leaked\n');
  });
  it('escapes what a message quotes (one line), then adds its own colour', () => {
    const { ctx, stderr } = testContext({ errTty: true, env: { NO_COLOR: undefined, TERM: 'xterm' } });
    const s = createStatus(ctx);
    s.warn("'Status\u001b[1A\u001b[2K' is not a field");
    s.info('not shown: one\ntwo, evil\u202etxt');
    expect(stderr.text).toBe("\u001b[33mwarning:\u001b[39m 'Status\\e[1A\\e[2K' is not a field\nnot shown: one\\ntwo, evil\\u202etxt\n");
  });
});
