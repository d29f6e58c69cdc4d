import { styleText } from 'node:util';
import { notice, type NoticeContext } from './notice.js';
import { type IoContext, type OutStream, useColor } from './streams.js';

/** Messages for the person at the terminal, on stderr, never on stdout (data only there). */
export interface Status {
  /** Progress or a result note; silent under --quiet. */
  info(message: string): void;
  /** A finished step (`✔`-style); silent under --quiet. */
  success(message: string): void;
  /** Something the user should know even under --quiet (data dropped, a new card instead of an update). */
  warn(message: string): void;
}

type Style = Parameters<typeof styleText>[0];

/**
 * The stderr message helper: honours --quiet, NO_COLOR / non-TTY (no escape codes) and redacts secrets.
 * Each message is one line: what it quotes from the server (field names, ids) is escaped before the
 * coloured prefix is added, so only cardboard's own colour codes reach the terminal.
 */
export function createStatus(ctx: NoticeContext & Pick<IoContext, 'stderr' | 'env'>, stderr: OutStream = ctx.stderr): Status {
  const color = useColor(ctx, stderr);
  // validateStream: false because we already decided from ctx (the test streams are not process.stderr).
  const paint = (style: Style, text: string) => (color ? styleText(style, text, { validateStream: false }) : text);
  // The stream may be another than ctx.stderr (a live line wraps it); the rest of the notice's context stays.
  const out: NoticeContext = { stderr, secrets: ctx.secrets, globals: ctx.globals };
  return {
    info: (message) => notice(out, message),
    success: (message) => notice(out, message, { prefix: `${paint('green', 'ok:')} ` }),
    warn: (message) => notice(out, message, { prefix: `${paint('yellow', 'warning:')} `, always: true }),
  };
}
