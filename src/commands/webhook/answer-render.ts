// The app's answer to a forward try as `listen --verbose` shows it under the try's line.
import { STATUS_CODES } from 'node:http';
import { terminalText } from '../../io/text.js';
import type { Answer } from '../../webhook/client.js';
import { answerBodyStart, answerBodyText, answerView } from '../../webhook/forward-entry.js';

/**
 * An answer as the terminal shows it: its headers and the start of its body (4 KiB) without the run's
 * secrets, spelled plainly or with JSON escapes; `truncated` when the body was longer.
 */
export function shownAnswer(answer: Answer, secrets: readonly string[]): { answer: Answer; truncated: boolean } {
  if (answer.status === undefined) return { answer, truncated: false };
  const { bytes, truncated } = answerBodyStart(answer.body, secrets);
  const text = answerBodyText(bytes, secrets);
  const { headers } = answerView({ ...answer, body: Buffer.alloc(0) }, secrets);
  return { answer: { ...answer, headers, body: text === bytes.toString('utf8') ? bytes : Buffer.from(text, 'utf8') }, truncated };
}

/** Lines of an answer's body shown under its forward line (`--verbose`); past them, and past its first 4 KiB, `…`. */
const ANSWER_BODY_LINES = 20;
/** Header lines shown under a forward line; past them one line says how many more (all are in --json and the record file). */
const ANSWER_HEADER_LINES = 30;
const ANSWER_INDENT = '      ';

/**
 * The app's answer under a forward line (`listen --verbose`), as shownAnswer made it: the status line, the
 * headers, a blank line and the start of the body, each line indented and escaped (terminalText). None
 * when no answer came (the forward line says why).
 */
export function answerLines(shown: { answer: Answer; truncated: boolean }): string[] {
  const { answer, truncated } = shown;
  if (answer.status === undefined) return [];
  const lines = [`${ANSWER_INDENT}${answer.status} ${STATUS_CODES[answer.status] ?? ''}`.trimEnd()];
  const headers = Object.entries(answer.headers ?? {});
  for (const [name, value] of headers.slice(0, ANSWER_HEADER_LINES)) lines.push(terminalText(`${ANSWER_INDENT}${name}: ${value}`));
  if (headers.length > ANSWER_HEADER_LINES) lines.push(`${ANSWER_INDENT}… ${headers.length - ANSWER_HEADER_LINES} more headers (all of them in --json and the record file)`);
  const bytes = answer.body;
  if (bytes.length === 0) return lines;
  lines.push('');
  const text = bytes.toString('utf8').split(/\r?\n/);
  if (text.at(-1) === '') text.pop();
  for (const line of text.slice(0, ANSWER_BODY_LINES)) lines.push(terminalText(`${ANSWER_INDENT}${line}`));
  if (truncated || text.length > ANSWER_BODY_LINES) lines.push(`${ANSWER_INDENT}… (the rest of the body is not shown)`);
  return lines;
}
