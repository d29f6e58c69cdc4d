import { Option } from 'commander';
import { resolveSelection, resolveSigningKey } from '../../config/index.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { readStdin } from '../../io/input.js';
import type { SecretKeeper } from '../../redact.js';

/**
 * `--signing-key-stdin`, the same flag and text on every webhook verb that signs or verifies (listen, replay,
 * send); loadSigningKey reads it. A new Option each time: commander keeps an option with the command it joins.
 */
export function signingKeyStdinOption(): Option {
  return new Option('--signing-key-stdin', "read the signing key from stdin (else the selected board's stored key or CARDBOARD_SIGNING_KEY; `board show` says which)");
}

/** The help line of those verbs on where the key may travel (httpUrl refuses the rest). */
export const KEY_TRANSPORT_HELP = 'The signing key goes over plain http:// only to loopback; another host needs https:// or --insecure.';

/** The webhook verbs that take `--signing-key-stdin`. */
type KeyedVerb = 'listen' | 'replay' | 'send';

/** A signing key with where it came from (printed, never the key itself). */
interface SigningKey {
  key: string;
  source: string;
}

/**
 * The webhook signing key: --signing-key-stdin, else the key resolveSigningKey finds (a named stored board's
 * own key before CARDBOARD_SIGNING_KEY; README, the precedence table). The key is added to `keeper`, the
 * run's registry, so it is redacted from anything printed.
 */
export async function loadSigningKey(ctx: Context, fromStdin: boolean, verb: KeyedVerb, keeper: SecretKeeper): Promise<SigningKey | undefined> {
  if (fromStdin) {
    // Only the line break a shell or `echo` adds is dropped: spec 6 compares the key exactly.
    const key = (await readStdin(ctx)).replace(/\r?\n$/, '');
    if (key === '') throw new UsageError('--signing-key-stdin: stdin was empty', { hint: `Pipe the key in: \`pbpaste | cardboard webhook ${verb} --signing-key-stdin …\`.` });
    keeper.add(key);
    return { key, source: 'stdin' };
  }
  const resolved = resolveSigningKey(ctx, await ctx.config.read());
  if (!resolved) return undefined;
  keeper.add(resolved.key);
  return { key: resolved.key, source: resolved.from };
}

/**
 * Hint shown when a command needs a key and has none: the three places a key comes from, the stored one
 * named by the command that stores it (with the selected board's alias when there is one).
 */
export async function noKeyHint(ctx: Context): Promise<string> {
  let alias: string | undefined;
  try {
    alias = resolveSelection(ctx, await ctx.config.read()).alias;
  } catch {
    // No board selected at all: the command is still named, with a placeholder.
  }
  return `Copy the key from Card Sources → Webhook signing key, then store it with \`cardboard board set-signing-key ${alias ?? '<alias>'}\`, or pass it with CARDBOARD_SIGNING_KEY or --signing-key-stdin.`;
}

/**
 * What a listener scrubs from each delivery (and never shows decoded): the signing key, the run's other
 * secrets, and the selected board's token if one is configured.
 */
export async function receivedSecrets(ctx: Context, signing: SigningKey | undefined): Promise<string[]> {
  let token: string | undefined;
  try {
    token = resolveSelection(ctx, await ctx.config.read()).token?.value;
  } catch {
    // No board selected: no token to scrub.
  }
  return [...(signing ? [signing.key] : []), ...ctx.secrets, ...(token ? [token] : [])];
}
