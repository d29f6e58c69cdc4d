import type { Command } from 'commander';
import type { Context, ContextRef } from '../../context.js';
import { nounSummary } from '../nouns.js';
import { UsageError } from '../../errors.js';
import { readStdin, readTextFile } from '../../io/input.js';
import { textFor } from '../../io/text.js';
import { writeChunk, writeJson } from '../../io/write.js';

/** Where the comment text comes from; exactly one of `text`, `file`, `stdin`. */
export interface CommentOptions {
  cardId: string;
  text?: string;
  file?: string;
  stdin: boolean;
  json: boolean;
}

const EXAMPLES = `
The text is the remaining arguments joined by spaces, or --file F, or - to read stdin (trailing
newlines are dropped). The endpoint has no board in its path, but the token is per board: --board
picks it as for every command.

Examples:
  $ cardboard comment "$id" Deployed to staging
  $ git log -1 --format=%B | cardboard comment "$id" -
  $ cardboard comment "$id" --file notes.md --json`;

/** Define `comment` under `parent`; `run` is replaceable so parse tests can spy on the options. */
export function commentCommand(parent: Command, ctx: ContextRef, run = runComment): Command {
  return parent
    .command('comment')
    .description(nounSummary('comment'))
    .argument('<cardId>', "the card's _id")
    .argument('[text...]', 'the comment text, or - to read it from stdin')
    .option('--file <path>', 'read the comment text from a file')
    .option('--json', 'print the whole comment instead of its id')
    .addHelpText('after', EXAMPLES)
    .action(async (cardId: string, words: string[], flags: { file?: string; json?: boolean }) => {
      if (cardId.trim() === '') throw new UsageError('the card id must not be empty');
      const stdin = words.length === 1 && words[0] === '-';
      if (flags.file !== undefined && words.length > 0) throw new UsageError('give the text as arguments or with --file, not both');
      if (flags.file === undefined && words.length === 0) {
        throw new UsageError('no comment text', { hint: 'Give it as arguments, with --file F, or - to read stdin.' });
      }
      await run(ctx(), {
        cardId,
        text: stdin || flags.file !== undefined ? undefined : words.join(' '),
        file: flags.file,
        stdin,
        json: flags.json ?? false,
      });
    });
}

/** The comment text from its source; text read from a file or stdin loses its trailing line breaks. */
async function commentText(ctx: Context, opts: CommentOptions): Promise<string> {
  if (opts.text !== undefined) return opts.text;
  const raw = opts.stdin ? await readStdin(ctx) : await readTextFile(opts.file ?? '', '--file');
  return raw.replace(/[\r\n]+$/, '');
}

/** Post the comment (spec 4.1) and print its id, or the whole Comment with --json. */
export async function runComment(ctx: Context, opts: CommentOptions): Promise<void> {
  const content = await commentText(ctx, opts);
  if (content.trim() === '') throw new UsageError('the comment text is empty; nothing was sent');
  const api = await ctx.api();
  const comment = await api.postComment(opts.cardId, content);
  if (opts.json) await writeJson(ctx.stdout, comment);
  else await writeChunk(ctx.stdout, `${textFor(ctx.stdout, comment.id)}\n`);
}
