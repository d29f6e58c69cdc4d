import type { Command } from 'commander';
import { SeenIds } from '../../api/seen-ids.js';
import type { ApiClient } from '../../api/types.js';
import type { Context, ContextRef } from '../../context.js';
import { ApiError, UsageError } from '../../errors.js';
import type { HttpMethod, HttpRequest, HttpResponse } from '../../http/index.js';
import { readFileBytes, readStdinBytes, readTextArgument } from '../../io/input.js';
import { writePaged } from '../../io/pager.js';
import { createRecordWriter } from '../../io/records.js';
import { createStatus } from '../../io/status.js';
import { writeChunk } from '../../io/write.js';
import { shiftedPagesNote } from '../card/page-footer.js';
import { nounSummary } from '../nouns.js';
import { type FieldFlag, fieldFlag, fieldObject, methodAndPath, METHODS, refuseSecretsInUrl, resolveTarget, type Target, typedValue } from './plan.js';
import { bodyFor, headText } from './render.js';

/** What `cardboard api` sends and shows; files named by --input and `-F key=@file` are read when it runs. */
export interface ApiOptions {
  /** The method named (positional or --method); undefined: GET, or POST with fields or --input (as gh). */
  method?: HttpMethod;
  /** As typed: a path on the base URL, `{board}` for the board's id; or a full URL on the base URL. */
  path: string;
  fields: FieldFlag[];
  /** A file whose bytes are the body, or `-` for stdin. */
  input?: string;
  include: boolean;
  paginate: boolean;
}

const EXAMPLES = `
The request goes to the selected board's base URL with its token in the x-token header, through the
same client as every command: the rate gate, retries of GET and HEAD (other methods only when nothing
was sent, or the service answered 429/503), Ctrl-C, exit codes. {board} in the path is the board's id.
A path that leaves the base URL (another host, a full URL elsewhere, ..) is refused: the token goes
with every request.

Without a method: GET, or POST when fields or --input are given. -f key=value adds a string field,
-F key=value a typed one (true, false, null and numbers become JSON; @file reads the value from a file,
@- from stdin). With POST, PUT, PATCH or DELETE the fields are a JSON object body; with GET and HEAD,
and with --input, they are query parameters. --input sends a file's bytes (- for stdin) as the body.

On a terminal a JSON answer is indented and escaped; piped, the body is written exactly as it came.
--paginate reads GET pages (page=0, 1, ... until []) of a card list and prints one JSON array, each
card once by _id. An answer of 4xx/5xx prints its body on stderr and exits as every command does
(1; 4 for 401/403). --include prints the status line and headers on stderr (credentials masked).

Examples:
  $ cardboard api '/api/aptlet/{board}/schema'
  $ cardboard api GET '/api/aptlet/{board}' --paginate > cards.json
  $ cardboard api POST '/api/aptlet/{board}' -f Name="Fix login" -F Priority=3`;

const collect = (typed: boolean) => (value: string, previous: FieldFlag[] = []) => [...previous, fieldFlag(value, typed)];

/** Define `api` under `parent`; `run` is replaceable so parse tests can spy on the options. */
export function apiCommand(parent: Command, ctx: ContextRef, run = runApi): Command {
  return parent
    .command('api')
    .description(nounSummary('api'))
    .usage('[options] [method] <path>')
    .argument('<method-or-path>', `${METHODS.join(', ')}; or the path, when the method is left out`)
    .argument('[path]', "a path on the base URL, e.g. '/api/aptlet/{board}' ({board}: the board's id)")
    .option('-X, --method <method>', 'the HTTP method (default: GET, or POST with fields or --input)')
    .option('-f, --raw-field <key=value>', 'add a string field (repeatable)', collect(false))
    .option('-F, --field <key=value>', 'add a typed field: true, false, null, numbers; @file reads a file (repeatable)', collect(true))
    .option('--input <file>', 'send the bytes of a file as the body (- for stdin)')
    .option('-i, --include', 'print the status line and response headers on stderr')
    .option('--paginate', 'read every page of a card list (GET ?page=0, 1, ... until []) and print one JSON array')
    .addHelpText('after', EXAMPLES)
    .action(async (first: string, second: string | undefined, flags: { method?: string; rawField?: FieldFlag[]; field?: FieldFlag[]; input?: string; include?: boolean; paginate?: boolean }) => {
      const { method, path } = methodAndPath(second === undefined ? [first] : [first, second], flags.method);
      const fields = [...(flags.rawField ?? []), ...(flags.field ?? [])];
      const opts: ApiOptions = { method, path, fields, input: flags.input, include: flags.include ?? false, paginate: flags.paginate ?? false };
      checkCombinations(opts);
      await run(ctx(), opts);
    });
}

/** The method sent: the one named, else GET, or POST when there is a body to send (gh's rule); --paginate reads. */
export function methodSent(opts: ApiOptions): HttpMethod {
  if (opts.method !== undefined) return opts.method;
  return !opts.paginate && (opts.fields.length > 0 || opts.input !== undefined) ? 'POST' : 'GET';
}

/** Flags that cannot go together, refused before anything is read or sent. */
function checkCombinations(opts: ApiOptions): void {
  const method = methodSent(opts);
  if (opts.paginate && method !== 'GET') throw new UsageError(`--paginate reads pages with GET, not ${method}`);
  if (opts.paginate && opts.input !== undefined) throw new UsageError('--paginate and --input cannot be used together');
  if (opts.paginate && opts.include) throw new UsageError('--include shows one answer; with --paginate, --verbose logs each page');
  if (opts.input !== undefined && (method === 'GET' || method === 'HEAD')) throw new UsageError(`--input sends a body, and a ${method} has none`, { hint: 'Name the method: cardboard api POST <path> --input <file>.' });
  const stdin = opts.fields.filter((f) => f.typed && f.value === '@-').length + (opts.input === '-' ? 1 : 0);
  if (stdin > 1) throw new UsageError('stdin can be read once: by --input - or by one -F key=@-');
}

/** The fields' values: -F converted (typedValue), `@file` and `@-` read; -f as typed. */
async function fieldValues(ctx: Context, fields: FieldFlag[]): Promise<Array<{ key: string; value: unknown }>> {
  const out: Array<{ key: string; value: unknown }> = [];
  for (const field of fields) {
    if (!field.typed) out.push({ key: field.key, value: field.value });
    else if (field.value.startsWith('@')) out.push({ key: field.key, value: await readTextArgument(ctx, field.value === '@-' ? '-' : field.value, `-F ${field.key}`) });
    else out.push({ key: field.key, value: typedValue(field.key, field.value) });
  }
  return out;
}

/** A field in a query: text as it is; a typed value as JSON writes it (null as `null`). */
const queryText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/**
 * The request: where, and what body. Fields are query parameters for GET and HEAD and beside --input (gh's
 * rule), otherwise one JSON object body; --input's bytes go as they are. Secrets in the URL are refused.
 */
async function buildRequest(ctx: Context, api: ApiClient, opts: ApiOptions): Promise<{ method: HttpMethod; target: Target; body: Pick<HttpRequest, 'body' | 'bodyBytes'> }> {
  const method = methodSent(opts);
  const target = resolveTarget(opts.path, api.http.baseUrl, api.board.id);
  const fields = await fieldValues(ctx, opts.fields);
  const inQuery = method === 'GET' || method === 'HEAD' || opts.input !== undefined;
  if (inQuery) for (const { key, value } of fields) target.query.append(key, queryText(value));
  refuseSecretsInUrl(target, ctx.secrets);
  if (opts.input !== undefined) return { method, target, body: { bodyBytes: opts.input === '-' ? await readStdinBytes(ctx) : await readFileBytes(opts.input, '--input') } };
  return { method, target, body: !inQuery && fields.length > 0 ? { body: fieldObject(fields) } : {} };
}

/** Send the request (or walk the pages) and print the answer. */
export async function runApi(ctx: Context, opts: ApiOptions): Promise<void> {
  const api = await ctx.api();
  const { method, target, body } = await buildRequest(ctx, api, opts);
  if (opts.paginate) return printPages(ctx, api, target);
  let res: HttpResponse;
  try {
    res = await api.http.send({ method, path: target.path, query: target.query, ...body, raw: true });
  } catch (err) {
    // The server's answer, for the person: status and headers with --include, then its body; main reports the error.
    if (err instanceof ApiError && err.response !== undefined) {
      if (opts.include && err.status !== undefined) ctx.stderr.write(headText(ctx, err.status, err.response.headers));
      const shown = bodyFor(ctx.stderr, err.response.body);
      const text = ctx.secrets.redact(typeof shown === 'string' ? shown : shown.toString('utf8'));
      if (text !== '') await writeChunk(ctx.stderr, text.endsWith('\n') ? text : `${text}\n`);
    }
    throw err;
  }
  if (opts.include) ctx.stderr.write(headText(ctx, res.status, res.headers));
  const shown = bodyFor(ctx.stdout, res.body as Buffer);
  // A person's screen goes through the pager when the answer is longer than it; a pipe gets the bytes.
  if (typeof shown === 'string') await writePaged(ctx, shown);
  else if (shown.length > 0) await writeChunk(ctx.stdout, shown);
}

/**
 * Every page of the card list at `target` (spec 4.5: page=0, 1, ... until []), printed as one JSON array with
 * each card once by `_id`: pages shift while cards are created or deleted, as `card list --all` knows.
 * A `page` in the query is the page to start from.
 */
async function printPages(ctx: Context, api: ApiClient, target: Target): Promise<void> {
  const start = target.query.get('page');
  if (start !== null && !/^\d{1,15}$/.test(start)) throw new UsageError(`--paginate: page=${start} in the query is not a page number (0, 1, ...)`);
  const printed = new SeenIds();
  let repeated = 0;
  const writer = createRecordWriter(ctx, { format: 'json', columns: [], indent: ctx.stdout.isTTY === true });
  const at = { path: target.path, query: target.query };
  for await (const page of api.cardPages({ at, startPage: start === null ? 0 : Number(start), signal: ctx.signal, seen: (card) => printed.has(card._id) })) {
    for (const card of page) {
      if (printed.add(card._id)) repeated++;
      else await writer.write(card);
    }
    await writer.flush();
  }
  await writer.end();
  if (repeated > 0) createStatus(ctx).info(shiftedPagesNote(repeated));
}
