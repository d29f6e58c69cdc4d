// Pure pieces of the benchmark runner: its arguments, the order of the clients in each round, and the
// statistics and text of the table (median, spread, ratio). No I/O here, so test/bench-lib can test them.

/** The scenarios `--only` accepts, in the order a full run takes them. */
export const SCENARIO_NAMES = ['startup', 'import-speed', 'import-limit', 'memory', 'list', 'webhook', 'webhook-memory', 'resync', 'resync-mirror', 'match-memory', 'soak', 'where-mirror', 'mirror-pull', 'mirror-team'];

export const USAGE = `usage: npm run bench -- [--quick] [--only ${SCENARIO_NAMES.join(',')}] [--node 22|24|26|PATH]... [--against REF]`;

/** A command line the runner refuses; its message is one line, followed by USAGE. */
export class UsageError extends Error {}

/**
 * Parse the runner's arguments: --quick, --only a,b (or --only=a,b), --node LINE|PATH (repeatable; a line is a
 * major version number), --against REF (or --against=REF). Returns { quick, only, nodes, against }.
 */
export function parseArgs(argv, names = SCENARIO_NAMES) {
  const opts = { quick: false, only: [...names], nodes: [], against: undefined };
  const value = (i, flag) => {
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) throw new UsageError(`${flag} needs a value`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.indexOf('=');
    const [flag, inline] = arg.startsWith('--') && eq !== -1 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
    const take = () => (inline !== undefined ? inline : value(i++, flag));
    if (flag === '--quick' && inline === undefined) opts.quick = true;
    else if (flag === '--only') opts.only = take().split(',').filter((s) => s !== '');
    else if (flag === '--node') opts.nodes.push(take());
    else if (flag === '--against') opts.against = take();
    else throw new UsageError(`unknown argument ${arg}`);
  }
  const unknown = opts.only.filter((name) => !names.includes(name));
  if (unknown.length > 0) throw new UsageError(`unknown scenario ${unknown.join(', ')}`);
  if (opts.only.length === 0) throw new UsageError('--only names no scenario');
  for (const node of opts.nodes) if (node === '') throw new UsageError('--node needs a Node line (22) or the path of a node binary');
  if (opts.against === '') throw new UsageError('--against needs a git ref');
  return opts;
}

/** A --node value that names a Node line (a major version number) rather than a path. */
export const isNodeLine = (spec) => /^\d+$/.test(spec);

/**
 * The order of `items` in round `round` (0-based): as given in even rounds, reversed in odd ones (A B, B A, A B,
 * …), so over two rounds every item has been measured as often early as late.
 */
export function abbaOrder(items, round) {
  return round % 2 === 0 ? [...items] : [...items].reverse();
}

/** Median of numbers (mean of the two middle ones for an even count). */
export function median(values) {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Round to `digits` significant figures. */
export function sig(value, digits = 3) {
  if (!Number.isFinite(value) || value === 0) return value;
  return Number(value.toPrecision(digits));
}

/** Median, smallest and largest of the samples. */
export function summary(values) {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values), n: values.length };
}

/**
 * Paired ratios a[i] / b[i] (samples of the same round), summarised: the ratio of two clients measured side by
 * side in each round is steadier than the ratio of their medians when the machine's speed drifts between rounds.
 */
export function pairedRatio(a, b) {
  const n = Math.min(a.length, b.length);
  const ratios = [];
  for (let i = 0; i < n; i++) ratios.push(a[i] / b[i]);
  return summary(ratios);
}

/** A number for the table: 3 significant figures, thousands separated ("10,100", "0.938"). */
export function num(value) {
  if (!Number.isFinite(value)) return String(value);
  return sig(value).toLocaleString('en', { maximumFractionDigits: 20 });
}

/** "4,360 rows/s (4,170–4,830)": the median and, over more than one sample, the spread (min–max). */
export function figure(values, unit = '') {
  const s = summary(values);
  const u = unit ? ` ${unit}` : '';
  return s.n > 1 ? `${num(s.median)}${u} (${num(s.min)}–${num(s.max)})` : `${num(s.median)}${u}`;
}

/** "0.93× (0.88–0.97)": a summarised ratio, with its spread over more than one pair. */
export function ratioText(r) {
  return r.n > 1 ? `${num(r.median)}× (${num(r.min)}–${num(r.max)})` : `${num(r.median)}×`;
}

/** What a table cell says for a figure the ref could not give because its CLI lacks the feature. */
export const notIn = (refLabel) => `— (not in ${refLabel})`;
