// The demo board of `cardboard emulator` keeps its id, token and signing key across restarts
// (the README's `board add` works as written), `--demo-seed` derives others, the fixed ones are refused
// off loopback, and `--burst` defaults to the service's 20.
import { describe, expect, it } from 'vitest';
import { toOptions } from '../../src/commands/emulator/emulator.js';
import { DEMO_BOARD_ID, DEMO_SIGNING_KEY, DEMO_TOKEN, startEmulator } from '../../src/emulator/server.js';
import { UsageError } from '../../src/errors.js';
import { runMain } from '../helpers/cli.js';
import { call } from './http.js';

const SERVICE_ID = /^[23456789ABCDEFGHJKLMNPQRSTWXYZabcdefghijkmnopqrstuvwxyz]{17}$/;

describe('the demo board', () => {
  it('has the fixed, README-documented id, token and signing key at every start', async () => {
    expect(DEMO_BOARD_ID).toMatch(SERVICE_ID);
    for (let run = 0; run < 2; run++) {
      const emu = await startEmulator({ port: 0 });
      try {
        expect(Object.keys(emu.boards)).toEqual([DEMO_BOARD_ID]);
        expect(emu.boards[DEMO_BOARD_ID]).toMatchObject({ token: DEMO_TOKEN, signingKey: DEMO_SIGNING_KEY, fields: ['Name', 'Status', 'Owner', 'Priority'] });
        const schema = await call(emu, 'GET', `/api/aptlet/${DEMO_BOARD_ID}/schema`, { token: DEMO_TOKEN });
        expect(schema.status).toBe(200);
      } finally {
        await emu.close();
      }
    }
  });

  it('--demo-seed derives other credentials: the same for the same seed, different for another', async () => {
    const boards = async (demoSeed: string) => {
      const emu = await startEmulator({ port: 0, demoSeed });
      await emu.close();
      return emu.boards;
    };
    const a = await boards('alpha');
    const again = await boards('alpha');
    const b = await boards('beta');
    expect(again).toEqual(a);
    const [idA, settingsA] = Object.entries(a)[0]!;
    const [idB, settingsB] = Object.entries(b)[0]!;
    expect(idA).toMatch(SERVICE_ID);
    expect(idA).not.toBe(DEMO_BOARD_ID);
    expect(idB).not.toBe(idA);
    expect(settingsA.token).not.toBe(DEMO_TOKEN);
    expect(settingsA.token).toHaveLength(32);
    expect(settingsB.token).not.toBe(settingsA.token);
    expect(settingsA.signingKey).not.toBe(DEMO_SIGNING_KEY);
    expect(settingsA.signingKey).not.toBe(settingsA.token);
  });

  it('the README’s `board add` (token on stdin) verifies against it', async () => {
    const emu = await startEmulator({ port: 0 });
    try {
      const r = await runMain(['board', 'add', 'local', '--base-url', emu.url, '--id', DEMO_BOARD_ID, '--token-stdin'], { input: `${DEMO_TOKEN}\n` });
      expect(r.stderr).toContain('verified, 4 fields');
      expect(r.code).toBe(0);
    } finally {
      await emu.close();
    }
  });
});

describe('cardboard emulator options', () => {
  it('binds loopback by default', () => {
    expect(toOptions({}).host).toBe('127.0.0.1');
  });

  it('--burst defaults to the service’s 20 under --rate-limit', () => {
    expect(toOptions({ rateLimit: '120/min' }).rateLimit).toEqual({ perMinute: 120, burst: 20 });
    expect(toOptions({ rateLimit: '120/min', burst: '5' }).rateLimit).toEqual({ perMinute: 120, burst: 5 });
  });

  it.each(['0.0.0.0', '::', '192.168.1.20'])('refuses the public demo credentials on --host %s (exit 2, names --demo-seed)', (host) => {
    let err: unknown;
    try {
      toOptions({ host });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).message).toContain(`--host ${host} is not loopback`);
    expect((err as UsageError).hint).toContain('--demo-seed');
  });

  it.each([
    [{ host: '0.0.0.0', demoSeed: 'x7' }, '0.0.0.0'],
    [{ host: '0.0.0.0', boards: 'b.json' }, '0.0.0.0'],
    [{ host: '127.0.0.2' }, '127.0.0.2'],
    [{ host: '::1' }, '::1'],
    [{ host: 'localhost' }, 'localhost'],
  ])('accepts %j', (flags, host) => {
    expect(toOptions(flags).host).toBe(host);
  });

  it('--demo-seed with --boards, or empty, is a usage error', () => {
    expect(() => toOptions({ demoSeed: 's', boards: 'b.json' })).toThrow(/--demo-seed and --boards cannot be combined/);
    expect(() => toOptions({ demoSeed: '' })).toThrow(/--demo-seed needs a non-empty value/);
  });
});
