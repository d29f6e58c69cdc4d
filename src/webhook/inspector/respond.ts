import type { IncomingMessage, ServerResponse } from 'node:http';

/** Sent with every answer of the inspector: no inline script or style, no framing, nothing cached or sniffed. */
export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/** An action's JSON body at most. */
const MAX_ACTION_BYTES = 64 * 1024;

/** An answer refused or failed, with its status and a message for the page. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** One server-sent event. */
export function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A whole answer with the inspector's security headers (a stream's head is written by its route). */
export function send(res: ServerResponse, status: number, type: string, body: string | Buffer, extra: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': String(Buffer.byteLength(body)), ...extra });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

/** An action's body, parsed (`empty`, when given, stands for no body); HttpError 413 past `max` bytes, 400 when it is not JSON. */
export async function readJson(req: IncomingMessage, max = MAX_ACTION_BYTES, empty?: unknown): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) throw new HttpError(413, `an action's body is ${max} bytes at most`, { connection: 'close' });
    chunks.push(chunk);
  }
  if (size === 0 && empty !== undefined) return empty;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new HttpError(400, 'the body is not JSON');
  }
}

/** A request refused for its token where a person may be looking: answered with forbiddenPage, not JSON. */
export class ForbiddenPage extends HttpError {
  constructor() {
    super(403, 'forbidden');
  }
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The page for a URL without the token or with a stale one: where the right URL is found, never the
 * token itself. Static text (no script, no style), sent with SECURITY_HEADERS like every answer.
 */
export function forbiddenPage(tokenFile: string | undefined): string {
  const kept = tokenFile
    ? `<p>This run keeps it in <code>${escapeHtml(tokenFile)}</code>, beside its record file: the same URL works after a restart with the same <code>--record</code>.</p>`
    : '<p>With <code>--record FILE</code> it is also kept in <code>FILE.inspector</code>, and the same URL works after a restart with the same <code>--record</code>; without it, each run has a new URL.</p>';
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>cardboard inspector: open the URL with its token</title></head>
<body>
<h1>This address needs the inspector's URL with its token</h1>
<p>The link you opened has no token, or the token of an earlier run. <code>cardboard webhook listen --inspect</code> prints the page's URL, token included, on its <code>Inspector:</code> line.</p>
${kept}
</body>
</html>
`;
}

/** A parsed JSON body as an object of fields; undefined for anything else. */
export function asObject(input: unknown): Record<string, unknown> | undefined {
  return typeof input === 'object' && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : undefined;
}

/** A delivery's number in a path; NaN (then 404) for anything else. */
export function seqOf(text: string): number {
  return /^[1-9]\d{0,15}$/.test(text) ? Number(text) : Number.NaN;
}
