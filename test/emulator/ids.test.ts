// The emulator's ids are shaped like the service's (`JShpBxEFgRmZnivTf`: 17 letters and
// digits), drawn from the CSPRNG, or from a seed where one is given.
import { describe, expect, it } from 'vitest';
import { ID_ALPHABET, derivedId, idSource, randomId } from '../../src/emulator/ids.js';
import { call } from './http.js';
import { BOARD_ID, TOKEN, startTestEmulator } from '../helpers/emulator.js';

const SERVICE_ID = /^[23456789ABCDEFGHJKLMNPQRSTWXYZabcdefghijkmnopqrstuvwxyz]{17}$/;

describe('service-shaped ids', () => {
  it('the alphabet is the service example’s: JShpBxEFgRmZnivTf is made of it', () => {
    expect('JShpBxEFgRmZnivTf').toMatch(SERVICE_ID);
    expect(ID_ALPHABET).toHaveLength(55);
    expect(new Set(ID_ALPHABET).size).toBe(55);
  });

  it('random ids: 17 characters of the alphabet, no repeats in 20,000, every character used', () => {
    const next = idSource();
    const ids = Array.from({ length: 20_000 }, next);
    for (const id of ids.slice(0, 200)) expect(id).toMatch(SERVICE_ID);
    expect(new Set(ids).size).toBe(ids.length);
    // Rejection sampling: each character about 1/55 of all (340,000 draws: ~6,182 each, sd ~78).
    const counts = new Map<string, number>();
    for (const id of ids) for (const c of id) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(55);
    for (const n of counts.values()) expect(Math.abs(n - 340_000 / 55)).toBeLessThan(600);
    expect(randomId()).toMatch(SERVICE_ID);
    expect(randomId(32)).toHaveLength(32);
  });

  it('a seed gives the same sequence every time, another seed another one', () => {
    const a = idSource('s1');
    const b = idSource('s1');
    const c = idSource('s2');
    const seqA = [a(), a(), a()];
    expect([b(), b(), b()]).toEqual(seqA);
    expect([c(), c(), c()]).not.toEqual(seqA);
    for (const id of seqA) expect(id).toMatch(SERVICE_ID);
    expect(derivedId('s1', 'token', 32)).toBe(derivedId('s1', 'token', 32));
    expect(derivedId('s1', 'token', 32)).not.toBe(derivedId('s1', 'signing-key', 32));
  });

  it('cards and comments the emulator makes carry such ids', async () => {
    const emu = await startTestEmulator();
    try {
      const card = (await call(emu, 'POST', `/api/aptlet/${BOARD_ID}`, { token: TOKEN, body: { Name: 'A' } })).json as { _id: string };
      expect(card._id).toMatch(SERVICE_ID);
      const comment = (await call(emu, 'POST', `/api/card/${card._id}/comment`, { token: TOKEN, body: { content: 'hi' } })).json as { id: string };
      expect(comment.id).toMatch(SERVICE_ID);
      expect(comment.id).not.toBe(card._id);
    } finally {
      await emu.close();
    }
  });

  it('idSeed makes the card ids of a session repeatable', async () => {
    const ids: string[][] = [];
    for (let run = 0; run < 2; run++) {
      const emu = await startTestEmulator({ idSeed: 'repeat' });
      try {
        const got: string[] = [];
        for (const name of ['A', 'B']) {
          got.push(((await call(emu, 'POST', `/api/aptlet/${BOARD_ID}`, { token: TOKEN, body: { Name: name } })).json as { _id: string })._id);
        }
        ids.push(got);
      } finally {
        await emu.close();
      }
    }
    expect(ids[1]).toEqual(ids[0]);
    expect(ids[0]![0]).not.toBe(ids[0]![1]);
  });
});
