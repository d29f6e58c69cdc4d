// How `cardboard api` shows an answer: the body as data (the bytes as they came on a pipe or in a file; on a
// terminal JSON indented and every character that could move the cursor escaped) and, with --include, the
// status line and headers for the person on stderr, with the headers that carry secrets masked.
import { STATUS_CODES } from 'node:http';
import type { Context } from '../../context.js';
import { utf8 } from '../../http/body.js';
import { noticeText } from '../../io/notice.js';
import { terminalJson } from '../../io/terminal-json.js';
import { terminalText } from '../../io/text.js';

/** JSON's white space: the only characters between its tokens. */
const JSON_SPACE = new Set([' ', '\t', '\n', '\r']);
const PAD = '  ';

/**
 * Valid JSON text laid out as JSON.stringify(value, null, 2) would, from the text itself: a value is never
 * parsed and written again, so a number such as 12345678901234567890 (past what a double holds) or 1.50 and a
 * string's escapes stay as the server wrote them. Written by hand: JSON.parse has no way to keep them.
 */
export function indentJson(json: string): string {
  const out: string[] = [];
  let depth = 0;
  const newline = () => `\n${PAD.repeat(depth)}`;
  for (let i = 0; i < json.length; i++) {
    const char = json[i]!;
    if (char === '"') {
      // A whole string at once: up to the first quote that no backslash escapes.
      let end = i + 1;
      while (json[end] !== '"') end += json[end] === '\\' ? 2 : 1;
      out.push(json.slice(i, end + 1));
      i = end;
    } else if (char === '{' || char === '[') {
      let next = i + 1;
      while (JSON_SPACE.has(json[next]!)) next++;
      if (json[next] === '}' || json[next] === ']') {
        out.push(char, json[next]!);
        i = next;
      } else {
        depth++;
        out.push(char, newline());
      }
    } else if (char === '}' || char === ']') {
      depth--;
      out.push(newline(), char);
    } else if (char === ',') out.push(',', newline());
    else if (char === ':') out.push(': ');
    else if (!JSON_SPACE.has(char)) out.push(char);
  }
  return out.join('');
}

function isJson(text: string): boolean {
  if (text.trim() === '') return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The body as `stream` shows it: the bytes as they came when it is not a terminal (nothing added, not even a
 * newline); on a terminal, JSON (whatever its Content-Type: spec 4 says bodies are JSON) indented and escaped
 * (terminalJson), any other text escaped (terminalText), ending with a newline. An empty body shows nothing.
 */
export function bodyFor(stream: { isTTY?: boolean }, bytes: Buffer): string | Buffer {
  if (!stream.isTTY || bytes.length === 0) return bytes;
  const text = utf8(bytes);
  if (isJson(text)) return `${terminalJson(indentJson(text))}\n`;
  const shown = terminalText(text, { keepNewlines: true });
  return shown.endsWith('\n') ? shown : `${shown}\n`;
}

/** Headers whose values are credentials: shown as `***` whatever they hold. */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-token', 'x-signingkey']);

/** `content-type` as `Content-Type`: undici gives names in lower case. */
function headerName(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_m, dash: string, letter: string) => `${dash}${letter.toUpperCase()}`);
}

/**
 * The status line and headers of an answer, as `curl -i` and `gh api --include` show them, for stderr: names
 * in order, credentials masked (SECRET_HEADERS), every line escaped and any stored secret redacted, then a
 * blank line. cardboard speaks HTTP/1.1 (undici's agent does not negotiate HTTP/2 unless asked to).
 */
export function headText(ctx: Pick<Context, 'secrets'>, status: number, headers: Record<string, string | string[] | undefined>): string {
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`.trimEnd()];
  for (const name of Object.keys(headers).sort()) {
    const value = headers[name];
    if (value === undefined) continue;
    const shown = SECRET_HEADERS.has(name.toLowerCase()) ? '***' : [value].flat().join(', ');
    lines.push(`${headerName(name)}: ${shown}`);
  }
  return `${lines.map((line) => noticeText(ctx.secrets, line)).join('\n')}\n\n`;
}
