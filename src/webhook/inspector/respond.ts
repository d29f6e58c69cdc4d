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

/** An action's body, parsed; HttpError 413 past MAX_ACTION_BYTES, 400 when it is not JSON. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_ACTION_BYTES) throw new HttpError(413, `an action's body is ${MAX_ACTION_BYTES} bytes at most`, { connection: 'close' });
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new HttpError(400, 'the body is not JSON');
  }
}
