// Who adds a secret to the run's registry: the session, for the credentials of each client it builds. The
// context only reads the registry; resolution (config/resolve.ts) only reads the settings.
import { describe, expect, it } from 'vitest';
import { openSession } from '../../src/api/session.js';
import { createContext } from '../../src/context.js';
import { Secrets } from '../../src/redact.js';
import { tempDir } from '../helpers/cli.js';

describe("the run's secrets", () => {
  it("the session adds the selected board's token and signing key, and the context reads them", async () => {
    const secrets = new Secrets();
    const env = { CARDBOARD_CONFIG_DIR: tempDir(), CARDBOARD_BASE_URL: 'http://127.0.0.1:9', CARDBOARD_BOARD: 'b1', CARDBOARD_TOKEN: 'tok-0123456789', CARDBOARD_SIGNING_KEY: 'whsk-0123456789' };
    const ctx = createContext({ env, secrets });
    expect(ctx.secrets.redact('tok-0123456789 whsk-0123456789')).toBe('tok-0123456789 whsk-0123456789');
    const session = openSession(ctx, secrets);
    try {
      await session.selected();
      expect([...secrets].sort()).toEqual(['tok-0123456789', 'whsk-0123456789']);
      expect(ctx.secrets.redact('tok-0123456789 whsk-0123456789')).toBe('*** ***');
      await session.client({ baseUrl: 'http://127.0.0.1:9', id: 'b2', token: 'tok-explicit-1' });
      expect([...ctx.secrets]).toContain('tok-explicit-1');
    } finally {
      await session.close();
    }
  });

  it('the context exposes no way to add one, and one stop and one drain (no cancellation object twice)', () => {
    const ctx = createContext({ env: {} });
    expect('add' in ctx.secrets).toBe(false);
    expect(Object.isFrozen(ctx.secrets)).toBe(true);
    expect('cancel' in ctx).toBe(false);
    expect(ctx.drain.signal).not.toBe(ctx.signal);
  });
});
