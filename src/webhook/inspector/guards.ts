// Who may ask the inspector. A local page is reachable by any web page the user opens; DNS rebinding and
// cross-site requests are refused: every request by `pathOf` (Host exactly 127.0.0.1:PORT or
// localhost:PORT, the token; else 403), an action (POST, DELETE) also by `checkAction` (the token header
// and the page's own Origin: 403; for POST a JSON content type, which no cross-site form can send: 415).
// A page opened without the token or with a stale one gets a short HTML page saying where the URL is
// (ForbiddenPage), the API and the stream a JSON error.
import type { IncomingMessage } from 'node:http';
import { ForbiddenPage, HttpError } from './respond.js';

/** The header an action must carry, with the token as its value. */
export const TOKEN_HEADER = 'x-cardboard-token';

/** Paths under the token answered with JSON errors; any other GET without the token gets ForbiddenPage. */
const API_PATH = /^(api(\/|$)|events$|deliveries\/|replay$)/;

/** The checks of every request and of every action, against the run's token and the port the inspector serves on. */
export class Guards {
  constructor(
    private readonly tokenMatches: (value: string | undefined) => boolean,
    private readonly port: () => number,
  ) {}

  /** The path under /<token>/ after the checks every request must pass (undefined for /<token> itself); throws HttpError 403 else. */
  pathOf(req: IncomingMessage): string | undefined {
    // DNS rebinding: a page of evil.example whose name now points here sends `Host: evil.example:PORT`.
    const host = req.headers.host;
    if (host !== `127.0.0.1:${this.port()}` && host !== `localhost:${this.port()}`) throw new HttpError(403, 'forbidden');
    const target = req.url ?? '/';
    const query = target.indexOf('?');
    const path = query === -1 ? target : target.slice(0, query);
    if (!path.startsWith('/')) throw new HttpError(403, 'forbidden');
    const slash = path.indexOf('/', 1);
    const token = slash === -1 ? path.slice(1) : path.slice(1, slash);
    const rest = slash === -1 ? undefined : path.slice(slash + 1);
    if (this.tokenMatches(token)) return rest;
    // Someone opening a page (an old bookmark, a URL without its token) is told where to find it.
    const method = req.method ?? 'GET';
    if ((method === 'GET' || method === 'HEAD') && !API_PATH.test(rest ?? '')) throw new ForbiddenPage();
    throw new HttpError(403, 'forbidden');
  }

  /** An action must come from the page: the token in its header, the page's origin if any, a JSON body (`json`). */
  checkAction(req: IncomingMessage, { json = true }: { json?: boolean } = {}): void {
    const header = req.headers[TOKEN_HEADER];
    if (!this.tokenMatches(typeof header === 'string' ? header : undefined)) throw new HttpError(403, `forbidden: no valid ${TOKEN_HEADER}`);
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== `http://${req.headers.host}`) throw new HttpError(403, 'forbidden: another origin');
    if (!json) return;
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') throw new HttpError(415, 'an action is a JSON body (content-type: application/json)');
  }
}
