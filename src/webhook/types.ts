// The record of one webhook request, shared by the modules that receive, record, scan and show it: apart
// from them, so that none imports another in a circle for its type.

/** One verified webhook request as received: exact body bytes, headers with the signing key redacted. */
export interface Delivery {
  /** 1, 2, 3… in arrival order; continues across restarts with the same record file. */
  seq: number;
  /** ISO 8601 UTC with milliseconds. */
  receivedAt: string;
  method: string;
  /** The request target: path and query as sent. */
  path: string;
  /** Header names as sent (original case), repeated headers joined with ", "; the signing key redacted. */
  headers: Record<string, string>;
  body: Buffer;
}
