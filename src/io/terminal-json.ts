// JSON for a terminal: the policy of terminalText (text.ts) for text that must stay JSON. A module of its
// own, importing nothing, because write.ts needs it and `--help` loads write.ts but not text.ts.

/**
 * What JSON.stringify leaves raw that a terminal must not receive: DEL, the C1 controls, the line and
 * paragraph separators and the format characters (bidi overrides and isolates such as U+202E) but the
 * zero-width joiner. C0 controls and lone surrogates it escapes itself, and outside its strings it writes
 * only ASCII, so each of these stands inside a string and may be written there as `\uXXXX`.
 */
const JSON_UNSAFE = '[\\u007f-\\u009f\\u2028\\u2029]|(?!\\u200d)\\p{Cf}';

/** A character as JSON escapes, one `\uXXXX` a UTF-16 unit (a pair beyond the BMP). */
function jsonEscape(char: string): string {
  let out = '';
  for (let i = 0; i < char.length; i++) out += `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return out;
}

/**
 * JSON text as JSON.stringify wrote it, for a terminal: what JSON_UNSAFE matches written as `\uXXXX`, so no
 * control or bidi character of the data reaches the screen and the text still reads back as the same value.
 */
export function terminalJson(json: string): string {
  // Made at each use, as terminalText's patterns are (text.ts): V8 reuses the compiled pattern.
  return json.replace(new RegExp(JSON_UNSAFE, 'gu'), jsonEscape);
}

/** JSON text printed as data on stdout: terminalJson on a terminal, exact on a pipe or in a file (see textFor). */
export function jsonFor(stream: { isTTY?: boolean }, json: string): string {
  return stream.isTTY ? terminalJson(json) : json;
}
