// `webhook listen`'s --forward-to, --where and --changed, read in the order given (commander keeps each
// option's values apart, so each value is numbered as it is read): filters given after a --forward-to, up to
// the next, are that route's; filters given before the first --forward-to are global.
import { resolveSelection } from '../../config/index.js';
import type { Context } from '../../context.js';
import { CardboardError, UsageError } from '../../errors.js';
import { httpUrl } from '../../http/url.js';
import { createStatus } from '../../io/status.js';
import { terminalText } from '../../io/text.js';
import { checkKeysAgainstBoard } from '../../schema/check.js';
import { describeUnknownKeys } from '../../schema/match.js';
import { checkWhereSyntax, type WhereTerm, whereAgainstBoard, whereWithoutSchema } from '../../schema/where.js';
import type { Routing } from '../../webhook/routes.js';

/** The help of the filters and routes (after the options of `webhook listen`). */
export const ROUTES_HELP = `--changed and --where choose the deliveries printed (and --json) and forwarded; every delivery is still
answered 200, recorded, applied to the mirror and kept by the inspector. --changed F: the delivery changed F
on its card against the card's last delivery (a new card changes each field it has); --where: the grammar
of \`card list --where\`, on the card's fields after the delivery. A delete, a comment or a body that is no
card matches neither. Several --where must all hold; several --changed: any of them.
Filters before the first --forward-to are global (they choose what is printed and narrow every route);
filters after a --forward-to, up to the next, are that URL's own: each kind of change to its own app. A
delivery is printed when the global filters match and, with --forward-to, some route takes it. Field names
are exact: checked against the board's schema when a board and token are set, else a card whose field
differs only by case is warned about. One --forward-to with no filter keeps <record>.forwarded; every other
route keeps <record>.forwarded-<hash of its URL and filters>, so each resumes where it was.`;

/** One value of a route option, numbered in the order commander read it. */
interface Given {
  at: number;
  value: string;
}

/** A group of filters as written: all --where must hold; one --changed field (if any) must have changed. */
interface FlagFilter {
  where: string[];
  changed: string[];
}

/** The filters and routes as given (field names not checked yet). */
export interface FlagRouting {
  global: FlagFilter;
  routes: Array<{ url: string } & FlagFilter>;
}

type Parser = (value: string, previous?: Given[]) => Given[];

/**
 * The argument parsers of --forward-to, --where and --changed, sharing one counter: commander calls them
 * left to right, so the numbers give the order of the flags across the three options. The counter lives in
 * this registration's closure and only grows, so a second parse of the same command orders its flags too.
 */
export function routeOptionParsers(): { forwardTo: Parser; where: Parser; changed: Parser } {
  let at = 0;
  const parser =
    (check: (value: string) => void): Parser =>
    (value, previous = []) => {
      check(value);
      return [...previous, { at: at++, value }];
    };
  return {
    forwardTo: parser(() => {}),
    where: parser(checkWhereSyntax),
    changed: parser((field) => {
      if (field === '') throw new UsageError('--changed needs a field name: --changed Status');
      if (field === '_id') throw new UsageError("--changed _id: a card's _id never changes", { hint: 'To follow one card, use --where _id=<id>.' });
    }),
  };
}

/**
 * The routing the flags give: `forwardTo` alone for at most one --forward-to and no filter (the plain
 * listener), else `routing`. Each URL is checked as --forward-to is (it receives the signing key); a URL
 * given twice is a usage error.
 */
export function routesFromFlags(flags: { forwardTo?: Given[]; where?: Given[]; changed?: Given[] }, insecure: boolean | undefined): { forwardTo?: string; routing?: FlagRouting } {
  const steps = [
    ...(flags.forwardTo ?? []).map((g) => ({ ...g, kind: 'forward' as const })),
    ...(flags.where ?? []).map((g) => ({ ...g, kind: 'where' as const })),
    ...(flags.changed ?? []).map((g) => ({ ...g, kind: 'changed' as const })),
  ].sort((a, b) => a.at - b.at);
  const routing: FlagRouting = { global: { where: [], changed: [] }, routes: [] };
  let group: FlagFilter = routing.global;
  for (const step of steps) {
    if (step.kind === 'forward') {
      // The forwarder signs each forward with the key: plain http:// only to loopback unless --insecure.
      const url = httpUrl(step.value, '--forward-to', { insecure });
      if (routing.routes.some((r) => r.url === url)) {
        throw new UsageError(`--forward-to ${terminalText(url)} is given twice`, { hint: 'Give each URL once, followed by its filters (several --where must all hold; several --changed: any of them).' });
      }
      const route = { url, where: [], changed: [] };
      routing.routes.push(route);
      group = route;
    } else {
      group[step.kind].push(step.value);
    }
  }
  const filtered = [routing.global, ...routing.routes].some((g) => g.where.length > 0 || g.changed.length > 0);
  if (!filtered && routing.routes.length <= 1) return { forwardTo: routing.routes[0]?.url };
  return { routing };
}

/**
 * The filters with their field names checked: against the selected board's schema when a board with a
 * token is at hand (an unknown name is a usage error with the nearest one, as `card list --where` gives),
 * else read as written (a card with a field that differs only by case is then warned about while listening).
 * A schema that cannot be had is a warning, not the end of the run: the listener does not need the service.
 */
export async function resolveRouting(ctx: Context, flags: FlagRouting): Promise<Routing & { namesChecked: boolean }> {
  const groups = [flags.global, ...flags.routes];
  const exprs = groups.flatMap((g) => g.where);
  const changed = [...new Set(groups.flatMap((g) => g.changed))];
  let terms: WhereTerm[] | undefined;
  const selection = resolveSelection(ctx, await ctx.config.read());
  if (selection.id && selection.baseUrl && selection.token) {
    try {
      const api = await ctx.api();
      terms = await whereAgainstBoard(api, exprs);
      const { unknown } = changed.length > 0 ? await checkKeysAgainstBoard(api, changed) : { unknown: [] };
      if (unknown.length > 0) throw new UsageError(`--changed: ${describeUnknownKeys(unknown)}; field names are case-sensitive`, { hint: 'Run `cardboard schema` for the exact names.' });
    } catch (err) {
      if (err instanceof UsageError || !(err instanceof CardboardError)) throw err;
      createStatus(ctx).warn(`cannot read the board's schema to check the filters' field names (${err.message}); they are used as written`);
      terms = undefined;
    }
  }
  const namesChecked = terms !== undefined;
  terms ??= whereWithoutSchema(exprs);
  let next = 0;
  const resolved = groups.map((g) => ({ where: terms.slice(next, (next += g.where.length)), changed: [...new Set(g.changed)] }));
  return { global: resolved[0]!, routes: flags.routes.map((r, i) => ({ url: r.url, filter: resolved[i + 1]! })), namesChecked };
}
