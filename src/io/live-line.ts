import type { OutStream } from './streams.js';
import { terminalText } from './text.js';
import { displayWidth, shortenMiddle, terminalColumns } from './width.js';

/** Carriage return, then erase the line: where the live line was is empty again, the cursor at its start. */
const ERASE = '\r\u001b[2K';

/**
 * One piece of a live line: its `state` first (what is going on and why: `forward down: 503`), then
 * `detail` (counts, times), then the `url` it is about, last. Too wide, the URL is cut first, then the detail,
 * and the state only when nothing else is left to cut.
 */
export interface LivePart {
  state: string;
  detail?: string;
  url?: string;
}

const SEP = ' · ';
const PART_SEP = '  |  ';
/** A URL is first cut to this width (most of a host and port), then details go, then the URL goes further. */
const URL_ROOMY = 24;
/** Narrower than this a cut URL says nothing: it is left out. */
const URL_LEAST = 6;

/** The parts as one line, nothing cut: `state · detail · url`, parts joined by `  |  `; escaped (terminalText). */
export function liveText(parts: readonly LivePart[]): string {
  return parts.map((p) => [p.state, p.detail, p.url].filter((x): x is string => x !== undefined && x !== '').map((x) => terminalText(x)).join(SEP)).join(PART_SEP);
}

/** `url` cut to `columns`: its scheme dropped first (`127.0.0.1:3000/hook`), then cut in the middle. */
function cutUrl(url: string, columns: number): string {
  if (displayWidth(url) <= columns) return url;
  return shortenMiddle(url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, ''), columns);
}

/**
 * Widths after taking `excess` columns from the widest of `widths` first, none going below `floor` (or its
 * own width when narrower); returns the new widths and what could not be taken.
 */
function level(widths: number[], floor: number, excess: number): { widths: number[]; left: number } {
  const out = [...widths];
  let left = excess;
  while (left > 0) {
    let widest = -1;
    for (let i = 0; i < out.length; i++) if (out[i]! > floor && (widest < 0 || out[i]! > out[widest]!)) widest = i;
    if (widest < 0) break;
    out[widest]!--;
    left--;
  }
  return { widths: out, left };
}

/**
 * The parts as one line of at most `columns` columns: the URLs cut (to URL_ROOMY), then the details cut at
 * their end (or left out), then the URLs cut further (or left out), and only then the line cut at its end.
 * So a state, which says what is wrong, stays whole down to the narrowest terminal that can hold it.
 */
export function fitLive(parts: readonly LivePart[], columns: number): string {
  const safe = parts.map((p) => ({
    state: terminalText(p.state),
    detail: p.detail ? terminalText(p.detail) : undefined,
    url: p.url ? terminalText(p.url) : undefined,
  }));
  // liveText escapes again, which leaves escaped text as it is.
  const line = () => liveText(safe);
  let over = displayWidth(line()) - columns;
  if (over <= 0) return line();
  const urls = safe.filter((p) => p.url !== undefined);
  const cutUrls = (floor: number) => {
    const { widths } = level(
      urls.map((p) => displayWidth(p.url!)),
      floor,
      over,
    );
    urls.forEach((p, i) => (p.url = cutUrl(p.url!, widths[i]!)));
    over = displayWidth(line()) - columns;
  };
  cutUrls(URL_ROOMY);
  for (const part of [...safe].reverse()) {
    if (over <= 0 || part.detail === undefined) continue;
    const width = displayWidth(part.detail);
    // A detail cut to a few columns says nothing: it goes with its separator.
    if (width - over < 8) part.detail = undefined;
    else part.detail = terminalText(part.detail, { maxColumns: width - over });
    over = displayWidth(line()) - columns;
  }
  if (over > 0) cutUrls(URL_LEAST);
  for (const part of urls) {
    if (over > 0 && displayWidth(part.url!) <= URL_LEAST) {
      part.url = undefined;
      over = displayWidth(line()) - columns;
    }
  }
  return over > 0 ? terminalText(line(), { maxColumns: columns }) : line();
}

/**
 * One line at the bottom of a terminal that is rewritten in place (a state that changes every few seconds),
 * while other lines keep scrolling above it: every write through `around` erases it first and draws it
 * again after. Only on a terminal. Its text is escaped (terminalText, a no-op on text escaped already) and
 * cut to the width, since a wrapped line could not be erased with one `\r`.
 */
interface LiveLine {
  /** Show `text` (cut at its end when too wide) or `parts` (fitted by fitLive) in place of the current live line. */
  show(text: string | readonly LivePart[]): void;
  /** Erase the live line (it is drawn no more until the next show). */
  clear(): void;
  /** Run a write to the terminal with the live line out of its way. */
  around(write: () => void): void;
  /** A stream whose writes go through `around`: hand it to what prints lines. */
  wrap<S extends OutStream>(stream: S): S;
}

/** A live line on `stream`, or undefined when it is not a terminal (piped output gets no escape codes). */
export function createLiveLine(stream: OutStream): LiveLine | undefined {
  if (!stream.isTTY) return undefined;
  let text: string | undefined;
  // One column spare: a line that fills the last column leaves the cursor past it on some terminals.
  const fit = (t: string | readonly LivePart[]) => {
    const columns = terminalColumns(stream) - 1;
    return typeof t === 'string' ? terminalText(t, { maxColumns: columns }) : fitLive(t, columns);
  };
  const live: LiveLine = {
    show(next) {
      text = fit(next);
      stream.write(`${ERASE}${text}`);
    },
    clear() {
      if (text === undefined) return;
      text = undefined;
      stream.write(ERASE);
    },
    around(write) {
      if (text === undefined) return write();
      stream.write(ERASE);
      write();
      stream.write(text);
    },
    wrap(target) {
      return new Proxy(target, {
        get(stream, name) {
          if (name !== 'write') {
            const value = Reflect.get(stream, name) as unknown;
            return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(stream) : value;
          }
          return (...args: Parameters<OutStream['write']>) => {
            let result = true;
            live.around(() => {
              result = (stream.write as (...a: unknown[]) => boolean)(...args);
            });
            return result;
          };
        },
      });
    },
  };
  return live;
}
