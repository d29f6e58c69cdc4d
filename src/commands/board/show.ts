import type { Command } from 'commander';
import type { Source } from '../../config/resolve.js';
import { resolveSelection } from '../../config/resolve.js';
import { configPath, readConfig } from '../../config/store.js';
import type { Context } from '../../context.js';
import { createStatus } from '../../io/status.js';
import { writeChunk, writeJson } from '../../io/write.js';

/** How `board show` prints. */
export interface BoardShowOptions {
  json: boolean;
}

/** What a command would use, and where each part came from; secrets only as present/absent. */
export interface BoardShowResult {
  alias: string | null;
  id: { value: string; source: Source } | null;
  baseUrl: { value: string; source: Source } | null;
  token: { present: boolean; source: Source | null };
  signingKey: { present: boolean; source: Source | null };
  configFile: string;
}

const EXAMPLES = `
Precedence: flags > CARDBOARD_* environment > config. Sources: flag, env, config. Never prints
the token or the signing key, only whether one is present and where it came from.

Examples:
  $ cardboard board show
  $ cardboard --board work board show --json`;

/** Define `board show` under `parent`; `run` is replaceable so parse tests can spy on the options. */
export function boardShowCommand(parent: Command, ctx: Context, run = runBoardShow): Command {
  return parent
    .command('show')
    .description('Show the board, base URL and secrets a command would use, and their source')
    .option('--json', 'print a JSON object')
    .addHelpText('after', EXAMPLES)
    .action(async (flags: { json?: boolean }) => {
      await run(ctx, { json: flags.json ?? false });
    });
}

/** Resolve like every API command does (without failing on missing parts) and describe the result. */
export async function runBoardShow(ctx: Context, opts: BoardShowOptions): Promise<void> {
  const sel = resolveSelection(ctx, readConfig(ctx.env));
  const result: BoardShowResult = {
    alias: sel.alias ?? null,
    id: sel.id ?? null,
    baseUrl: sel.baseUrl ?? null,
    token: { present: Boolean(sel.token), source: sel.token?.source ?? null },
    signingKey: { present: Boolean(sel.signingKey), source: sel.signingKey?.source ?? null },
    configFile: configPath(ctx.env),
  };
  if (opts.json) return writeJson(ctx.stdout, result);
  const from = (source: Source | null | undefined) => (source ? `  (from ${source})` : '');
  const lines = [
    `board:        ${result.id ? result.id.value : '(none)'}${result.alias ? ` (alias ${result.alias})` : ''}${from(result.id?.source)}`,
    `base URL:     ${result.baseUrl ? result.baseUrl.value : '(none)'}${from(result.baseUrl?.source)}`,
    `token:        ${result.token.present ? 'present' : 'absent'}${from(result.token.source)}`,
    `signing key:  ${result.signingKey.present ? 'present' : 'absent'}${from(result.signingKey.source)}`,
    `config file:  ${result.configFile}`,
  ];
  await writeChunk(ctx.stdout, `${lines.join('\n')}\n`);
  if (!result.id || !result.baseUrl || !result.token.present) {
    createStatus(ctx).info('Incomplete: set what is missing with --board/--base-url, CARDBOARD_* variables, or `cardboard board add`.');
  }
}
