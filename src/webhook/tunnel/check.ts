import { STATUS_CODES } from 'node:http';
import { durationOf } from '../../units.js';
import type { DeliveryClient } from '../client.js';
import { SIGNING_HEADER } from '../delivery.js';
import { CHECK_HEADER, type Listener } from '../listener.js';
import type { CheckResult } from './tunnel.js';

/** How long one test delivery may take, there and back through the provider. */
const CHECK_TIMEOUT = durationOf(10_000);

/** The test delivery's body: JSON, so a receiver that logs bodies shows what it is. Never a card. */
const CHECK_BODY = Buffer.from(JSON.stringify({ cardboard: 'reachability check from `cardboard webhook listen`; not a card, never recorded or forwarded' }));

/**
 * A check of the public URL: one delivery signed with the key the listener verifies, carrying a token the
 * listener issued. It passed when the answer is 200 and the listener saw that very token: a 200 from some
 * other receiver at the URL does not count. No redirect is followed (the key must not go elsewhere).
 */
export function publicUrlCheck(listener: Listener, key: string, client: DeliveryClient): (url: string, signal: AbortSignal) => Promise<CheckResult> {
  return async (url, signal) => {
    const expected = listener.expectCheck();
    let seen = false;
    void expected.arrived.then(() => (seen = true));
    try {
      const answer = await client.send({
        url,
        method: 'POST',
        headers: { 'content-type': 'application/json', [SIGNING_HEADER]: key, [CHECK_HEADER]: expected.token },
        body: CHECK_BODY,
        timeout: CHECK_TIMEOUT,
        signal,
      });
      // The listener answers before its 200 travels back: a token it saw is marked by now.
      await Promise.resolve();
      if (answer.status === 200 && seen) return { ok: true, ms: answer.ms };
      if (answer.status === undefined) return { ok: false, reason: `no answer (${answer.error ?? 'failed'})` };
      if (answer.status === 200) return { ok: false, reason: 'answered 200, but not by this listener (another receiver at that URL?)' };
      const start = answer.body.toString('utf8').replace(/\s+/g, ' ').trim().slice(0, 80);
      return { ok: false, reason: `answered ${answer.status} ${STATUS_CODES[answer.status] ?? ''}`.trim() + (start ? `: ${start}` : '') };
    } finally {
      expected.done();
    }
  };
}
