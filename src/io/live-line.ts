import type { OutStream } from '../context.js';
import { terminalText } from './text.js';
import { terminalColumns } from './width.js';

/** Carriage return, then erase the line: where the live line was is empty again, the cursor at its start. */
const ERASE = '\r\u001b[2K';

/**
 * One line at the bottom of a terminal that is rewritten in place (a state that changes every few seconds),
 * while other lines keep scrolling above it: every write through `around` erases it first and draws it
 * again after. Only on a terminal. Its text is escaped (terminalText, a no-op on text escaped already) and
 * cut to the width, since a wrapped line could not be erased with one `\r`.
 */
export interface LiveLine {
  /** Show `text` in place of the current live line. */
  show(text: string): void;
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
  const fit = (t: string) => terminalText(t, { maxColumns: terminalColumns(stream) - 1 });
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
        get(t, name) {
          if (name !== 'write') {
            const value = Reflect.get(t, name) as unknown;
            return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(t) : value;
          }
          return (...args: Parameters<OutStream['write']>) => {
            let result = true;
            live.around(() => {
              result = (t.write as (...a: unknown[]) => boolean)(...args);
            });
            return result;
          };
        },
      });
    },
  };
  return live;
}
