// The app's answer to a forward try as `listen --verbose` shows it under the try's line.
import { STATUS_CODES } from 'node:http';
import { terminalText } from '../../io/text.js';
import type { Answer } from '../../webhook/client.js';
import { answerBodyStart, answerView } from '../../webhook/forward-entry.js';

/** Lines of an answer's body shown under its forward line (`--verbose`); past them, and past its first 4 KiB, `…`. */
const ANSWER_BODY_LINES = 20;
const ANSWER_INDENT = '      ';

/**
 * The app's answer under a forward line (`listen --verbose`): the status line, the headers, a blank line and
 * the start of the body, each line indented and escaped (terminalText), the secrets scrubbed. None when no
 * answer came (the forward line says why).
 */
export function answerLines(answer: Answer, secrets: readonly string[]): string[] {
  if (answer.status === undefined) return [];
  const view = answerView({ ...answer, body: Buffer.alloc(0) }, secrets);
  const lines = [`${ANSWER_INDENT}${answer.status} ${STATUS_CODES[answer.status] ?? ''}`.trimEnd()];
  for (const [name, value] of Object.entries(view.headers ?? {})) lines.push(terminalText(`${ANSWER_INDENT}${name}: ${value}`));
  const { bytes, truncated } = answerBodyStart(answer.body, secrets);
  if (bytes.length === 0) return lines;
  lines.push('');
  const text = bytes.toString('utf8').split(/\r?\n/);
  if (text.at(-1) === '') text.pop();
  for (const line of text.slice(0, ANSWER_BODY_LINES)) lines.push(terminalText(`${ANSWER_INDENT}${line}`));
  if (truncated || text.length > ANSWER_BODY_LINES) lines.push(`${ANSWER_INDENT}… (the rest of the body is not shown)`);
  return lines;
}
