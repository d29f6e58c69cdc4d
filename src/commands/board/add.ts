import type { Command } from 'commander';
import { parsePostUrl, readBaseUrl } from '../../config/resolve.js';
import { storedBoard } from '../../config/store.js';
import { type Context, type ContextRef, ownSecrets, type SecretsRef } from '../../context.js';
import type { SecretKeeper } from '../../redact.js';
import { ApiError, AuthError, CardboardError, UsageError } from '../../errors.js';
import { checkBaseUrl } from '../../http/url.js';
import { createStatus } from '../../io/status.js';
import { checkSecret, promptSecret, readSecretsFromStdin } from './secret-input.js';
import { changeBoard } from './stored.js';
import { plural } from '../../io/text.js';

/** What `board add` stores and how it gets the secrets. */
export interface BoardAddOptions {
  alias: string;
  baseUrl: string;
  id: string;
  tokenStdin: boolean;
  signingKeyStdin: boolean;
  verify: boolean;
  makeDefault: boolean;
}

const EXAMPLES = `
The token comes from a hidden prompt on a terminal, or from stdin with --token-stdin; never from a
flag value (it would show in ps and the shell history). With --token-stdin and --signing-key-stdin,
stdin holds two lines: the token, then the signing key. The first board added becomes the default.

Examples:
  $ cardboard board add work --url https://cards.example.com/api/aptlet/64f1c2e8
  $ printf '%s\\n' "$TOKEN" | cardboard board add ci --url "$POST_URL" --token-stdin
  $ cardboard board add local --base-url http://127.0.0.1:8080 --id b-demo --no-verify`;

const ALIAS = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Check an alias: letters, digits, `.`, `_`, `-`; it must not be mistaken for a flag. */
function checkAlias(alias: string): string {
  if (!ALIAS.test(alias)) throw new UsageError(`Invalid alias "${alias}": use letters, digits, ".", "_" or "-".`);
  return alias;
}

/** The board of `--base-url` (a POST URL names its own) and `--id`: one board, or a UsageError naming both. */
function targetOf(given: { baseUrl: string; id?: string } | undefined, id: string | undefined): { baseUrl: string; id: string } {
  const board = id || given?.id;
  if (given === undefined || !board) throw new UsageError('Which board? Pass --url <POST URL>, or --base-url <url> with --id <board id>.');
  if (given.id !== undefined && board !== given.id) {
    throw new UsageError(`--base-url is the POST URL of board ${given.id}, but --id names board ${board}.`, {
      hint: 'Give one board: drop --id, or give the base URL without /api/aptlet/<board id>.',
    });
  }
  return { baseUrl: given.baseUrl, id: board };
}

/** Define `board add` under `parent`; `run` is replaceable so parse tests can spy on the options. */
export function boardAddCommand(parent: Command, ctx: ContextRef, run = runBoardAdd, secrets: SecretsRef = ownSecrets): Command {
  return parent
    .command('add')
    .description("Store a board's POST URL and API token under an alias")
    .argument('<alias>', 'a short name for the board, e.g. work')
    .option('--url <post-url>', 'the POST URL from Card Sources, e.g. https://host/api/aptlet/<board id>')
    .option('--id <board-id>', 'the board id (with the global --base-url, instead of --url)')
    .option('--token-stdin', 'read the API token from stdin')
    .option('--signing-key-stdin', 'read the webhook signing key from stdin too')
    .option('--no-verify', 'save without checking the token against the schema endpoint')
    .option('--default', 'make it the default board')
    .addHelpText('after', EXAMPLES)
    .action(async (alias: string, flags: { url?: string; id?: string; tokenStdin?: boolean; signingKeyStdin?: boolean; verify: boolean; default?: boolean }) => {
      // --base-url is a global option (it reaches every command), so it arrives through ctx().globals.
      const baseUrlFlag = ctx().globals.baseUrl;
      let target: { baseUrl: string; id: string };
      if (flags.url) {
        if (baseUrlFlag || flags.id) throw new UsageError('Pass either --url, or --base-url with --id, not both.');
        target = parsePostUrl(flags.url);
      } else {
        target = targetOf(baseUrlFlag === undefined ? undefined : readBaseUrl(baseUrlFlag), flags.id);
      }
      if (flags.signingKeyStdin && !flags.tokenStdin) {
        // The token prompt needs stdin to be the terminal, so both secrets come from the pipe or neither.
        throw new UsageError('--signing-key-stdin needs --token-stdin (stdin then holds two lines: token, signing key).', {
          hint: 'Or store the key afterwards with `cardboard board set-signing-key <alias>`.',
        });
      }
      await run(ctx(), {
        alias: checkAlias(alias),
        baseUrl: checkBaseUrl(target.baseUrl, ctx().globals.insecure),
        id: target.id,
        tokenStdin: Boolean(flags.tokenStdin),
        signingKeyStdin: Boolean(flags.signingKeyStdin),
        verify: flags.verify,
        makeDefault: Boolean(flags.default),
      }, secrets());
    });
}

async function verify(ctx: Context, opts: BoardAddOptions, token: string): Promise<number> {
  try {
    const api = await ctx.apiFor({ baseUrl: opts.baseUrl, id: opts.id, token });
    return (await api.getSchema({ signal: ctx.signal })).length;
  } catch (err) {
    if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
      throw new AuthError(`The service refused the token for board ${opts.id} (${err.status}); nothing was saved.`, {
        hint: 'Copy the API Key of this board again (Card Sources → API), and check that the POST URL is of the same board.',
        cause: err,
      });
    }
    if (err instanceof CardboardError && !(err instanceof UsageError)) {
      throw new CardboardError(`Could not verify board ${opts.id}: ${err.message}. Nothing was saved.`, {
        hint: `${err.hint ? `${err.hint} ` : ''}To save without checking, pass --no-verify.`,
        exitCode: err.exitCode,
        cause: err,
      });
    }
    throw err;
  }
}

/** Read the secrets (added to `keeper`, the run's registry), check the token against the schema endpoint (spec 4.2), then store the board (0600). */
export async function runBoardAdd(ctx: Context, opts: BoardAddOptions, keeper: SecretKeeper): Promise<void> {
  let token: string;
  let signingKey: string | undefined;
  if (opts.tokenStdin) [token = '', signingKey] = await readSecretsFromStdin(ctx, opts.signingKeyStdin);
  else token = await promptSecret(ctx, 'API token', '--token-stdin');
  keeper.add(checkSecret(token, 'token'));
  if (signingKey !== undefined) keeper.add(checkSecret(signingKey, 'signing key'));

  const status = createStatus(ctx);
  const fieldCount = opts.verify ? await verify(ctx, opts, token) : undefined;
  const { updated, isDefault } = await changeBoard(ctx.config, opts.alias, (previous, config) => {
    // Re-adding the same board keeps its signing key unless a new one is given.
    const keep = previous && previous.id === opts.id && previous.baseUrl === opts.baseUrl ? previous.signingKey : undefined;
    config.boards[opts.alias] = { id: opts.id, baseUrl: opts.baseUrl, token, ...((signingKey ?? keep) ? { signingKey: signingKey ?? keep } : {}) };
    if (opts.makeDefault || !config.defaultBoard || !storedBoard(config, config.defaultBoard)) config.defaultBoard = opts.alias;
    return { updated: previous !== undefined, isDefault: config.defaultBoard === opts.alias };
  });
  const checked = fieldCount === undefined ? 'not verified' : `verified, ${plural(fieldCount, 'field')}`;
  status.success(`${updated ? 'Updated' : 'Saved'} board "${opts.alias}" (id ${opts.id} at ${opts.baseUrl}; ${checked})${isDefault ? ', the default board' : ''}.`);
}
