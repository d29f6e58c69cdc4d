import type { Command } from 'commander';
import { aliasAdvice, describeOrigin, type Origin, resolveSelection } from '../../config/resolve.js';
import { cacheDir, type CardboardConfig, configPath } from '../../config/store.js';
import type { Context, ContextRef } from '../../context.js';
import { createStatus } from '../../io/status.js';
import { terminalText } from '../../io/text.js';
import { writeChunk, writeJson } from '../../io/write.js';

/** How `board show` prints. */
export interface BoardShowOptions {
  json: boolean;
}

/** Where a part came from, in `board show --json`: `from` is the flag, the variable or the stored board's alias. */
interface ShownSource {
  source: Origin['kind'] | null;
  from: string | null;
}

/**
 * `board show --json` (README, "Boards and credentials"): every key always present with one type, in every
 * state (nothing set, env only, stored). Secrets only as `set`, never their value.
 */
interface BoardShowResult {
  /** The stored board in use, or null (an id from flags/env, or nothing). */
  alias: string | null;
  id: { value: string | null } & ShownSource;
  baseUrl: { value: string | null } & ShownSource;
  token: { set: boolean } & ShownSource;
  signingKey: { set: boolean } & ShownSource;
  /** Board, base URL and token are all known: a command that calls the service can run. */
  ready: boolean;
  configFile: string;
  cacheDir: string;
}

const EXAMPLES = `
Each part comes from a flag, a CARDBOARD_* variable, a stored board or the default board (\`board use\`);
a board named with --board or CARDBOARD_BOARD keeps its own base URL and token (see
docs/boards-and-credentials.md). Never prints the token or the signing key, only whether one is set and where from.

Examples:
  $ cardboard board show
  $ cardboard --board work board show --json`;

/** Define `board show` under `parent`; `run` is replaceable so parse tests can spy on the options. */
export function boardShowCommand(parent: Command, ctx: ContextRef, run = runBoardShow): Command {
  return parent
    .command('show')
    .description('Show the board, base URL and secrets a command would use, and their source')
    .option('--json', 'print a JSON object')
    .addHelpText('after', EXAMPLES)
    .action(async (flags: { json?: boolean }) => {
      await run(ctx(), { json: flags.json ?? false });
    });
}

const shown = (origin: Origin | undefined): ShownSource => ({ source: origin?.kind ?? null, from: origin?.name ?? null });

/** What a command would use, resolved exactly as an API command resolves it, without failing on missing parts. */
function showResult(ctx: Context, config: CardboardConfig): BoardShowResult {
  const sel = resolveSelection(ctx, config);
  return {
    alias: sel.alias ?? null,
    id: { value: sel.id?.value ?? null, ...shown(sel.id?.origin) },
    baseUrl: { value: sel.baseUrl?.value ?? null, ...shown(sel.baseUrl?.origin) },
    token: { set: sel.token !== undefined, ...shown(sel.token?.origin) },
    signingKey: { set: sel.signingKey !== undefined, ...shown(sel.signingKey?.origin) },
    ready: Boolean(sel.id && sel.baseUrl && sel.token),
    configFile: configPath(ctx.env),
    cacheDir: cacheDir(ctx.env),
  };
}

const from = (part: ShownSource) => (part.source && part.from ? `  (from ${describeOrigin({ kind: part.source, name: part.from })})` : '');

/** What a command would still need, and where to give it; a board name that is no stored alias gets the nearest one. */
function missing(shown: BoardShowResult, config: CardboardConfig): string {
  if (!shown.id.value) return 'no board: pass --board <alias-or-id>, set CARDBOARD_BOARD, or store one with `cardboard board add`.';
  if (!shown.baseUrl.value) {
    const { suggestion, stored } = aliasAdvice(shown.id.value, config);
    const advice = suggestion === undefined ? (stored ? ` ${stored}` : '') : ` Did you mean ${suggestion}?`;
    return `no base URL for board ${shown.id.value}: pass --base-url or set CARDBOARD_BASE_URL.${advice}`;
  }
  return `no token for board ${shown.id.value}: set CARDBOARD_TOKEN, or store the board with \`cardboard board add\`.`;
}

/** Print the result: `--json` exact, otherwise one line a part, escaped for the terminal. */
export async function runBoardShow(ctx: Context, opts: BoardShowOptions): Promise<void> {
  const config = await ctx.config.read();
  const result = showResult(ctx, config);
  if (opts.json) return writeJson(ctx.stdout, result);
  const lines = [
    `board:        ${result.id.value ?? '(none)'}${result.alias && result.alias !== result.id.value ? ` (alias ${result.alias})` : ''}${from(result.id)}`,
    `base URL:     ${result.baseUrl.value ?? '(none)'}${from(result.baseUrl)}`,
    `token:        ${result.token.set ? 'set' : 'not set'}${from(result.token)}`,
    `signing key:  ${result.signingKey.set ? 'set' : 'not set'}${from(result.signingKey)}`,
    `config file:  ${result.configFile}`,
    `cache dir:    ${result.cacheDir}`,
  ];
  await writeChunk(ctx.stdout, `${lines.map((line) => terminalText(line)).join('\n')}\n`);
  if (!result.ready) createStatus(ctx).info(`Incomplete: ${missing(result, config)}`);
}
