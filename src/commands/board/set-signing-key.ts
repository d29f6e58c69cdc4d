import type { Command } from 'commander';
import { type Context, type ContextRef, isInteractive, ownSecrets, type SecretsRef } from '../../context.js';
import type { SecretKeeper } from '../../redact.js';
import { createStatus } from '../../io/status.js';
import { checkSecret, promptSecret, readSecretsFromStdin } from './secret-input.js';
import { changeStoredBoard, requireBoard, StoredAliasArgument } from './stored.js';

/** Which board gets the webhook signing key. */
export interface BoardSetSigningKeyOptions {
  alias: string;
}

const EXAMPLES = `
The key is the webhook signing key from Card Sources (spec 6): a hidden prompt on a terminal,
otherwise one line read from stdin. \`webhook listen\` compares it to each request's x-signingKey.

Examples:
  $ cardboard board set-signing-key work
  $ printf '%s\\n' "$SIGNING_KEY" | cardboard board set-signing-key work`;

/** Define `board set-signing-key` under `parent`; `run` is replaceable so parse tests can spy on the options. */
export function boardSetSigningKeyCommand(parent: Command, ctx: ContextRef, run = runBoardSetSigningKey, secrets: SecretsRef = ownSecrets): Command {
  return parent
    .command('set-signing-key')
    .description("Store a board's webhook signing key (from a prompt or stdin)")
    .addArgument(new StoredAliasArgument())
    .addHelpText('after', EXAMPLES)
    .action(async (alias: string) => {
      await run(ctx(), { alias }, secrets());
    });
}

/** Read the key (prompt on a TTY, else stdin; added to `keeper`, the run's registry) and store it with the board, file mode 0600. */
export async function runBoardSetSigningKey(ctx: Context, opts: BoardSetSigningKeyOptions, keeper: SecretKeeper): Promise<void> {
  // Checked before asking: nobody types a key for a board that is not there.
  requireBoard(await ctx.config.read(), opts.alias);
  const key = isInteractive(ctx)
    ? await promptSecret(ctx, 'Webhook signing key', 'stdin')
    : (await readSecretsFromStdin(ctx, false))[0]!;
  keeper.add(checkSecret(key, 'signing key'));
  await changeStoredBoard(ctx.config, opts.alias, (board) => {
    board.signingKey = key;
  });
  createStatus(ctx).success(`Stored the webhook signing key of board "${opts.alias}".`);
}
