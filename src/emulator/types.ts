// Public types of the emulator. Only the spec's record types are shared with the client, so a bug cannot hide in both.
import type { Card, Comment, Field, UpdateMode } from '../spec-types.js';

/** One board as written in a boards file; omitted settings take their defaults (spec 2.4). */
interface BoardConfig {
  token: string;
  fields: string[];
  /** Default `Update if exists`. */
  updateMode?: UpdateMode;
  /** Default false (spec 2.4: off by default). */
  createFields?: boolean;
  /** Where webhook requests go; null or absent: no webhooks. */
  webhookUrl?: string | null;
  /** Sent as x-signingKey on every webhook request; generated when absent. */
  signingKey?: string;
}

/** A board with every setting filled in, as the emulator runs it. */
export interface BoardSettings {
  token: string;
  fields: string[];
  updateMode: UpdateMode;
  createFields: boolean;
  webhookUrl: string | null;
  signingKey: string;
}

/** The boards file: board id → settings. */
export type BoardsFile = Record<string, BoardConfig>;

/** How to start an emulator; every option has a default. */
export interface EmulatorOptions {
  /** 0 = any free port (default 0). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default: one demo board with fields Name, Status, Owner, Priority (fixed credentials, see demoSeed). */
  boards?: BoardsFile;
  /** Derive the demo board's id, token and signing key from this seed instead of the fixed ones (ignored with `boards`). */
  demoSeed?: string;
  /** Seed of card and comment ids: the same sequence for the same seed (default: the CSPRNG). */
  idSeed?: string;
  /** Cards per page of GET /api/aptlet/{id} (default 50). */
  pageSize?: number;
  /** Per-token token bucket; no limit when absent. */
  rateLimit?: { perMinute: number; burst: number };
  /** Fault spec, e.g. `503:0.05,500-after:0.02,reset:0.02,reset-after:0.01,delay:200ms`. */
  faults?: string;
  /** Seed of the fault PRNG, so a test run is repeatable (default: random). */
  faultSeed?: number;
  /** Demo cards inserted into the first board at start. */
  seedCards?: number;
  /** The first board's Webhook URL, replacing the one of `boards` (the demo board's, by default none). */
  webhookUrl?: string;
  /** Cap of the webhook retry backoff (default 2 000 ms: a development tool's, the service has none). */
  webhookRetryCapMs?: number;
  /** How long a webhook receiver may take before the try counts as failed (default 60 000 ms, spec 6). */
  webhookTimeoutMs?: number;
  /** Most recent requests kept for requests() (default 50 000). */
  recordLimit?: number;
}

/** Webhook delivery counters of one board. */
export interface WebhookStats {
  /** Deliveries waiting, including the one being tried. */
  pending: number;
  delivered: number;
  /** Every try, failed ones included. */
  attempts: number;
}

/** What one board holds right now (copies; changing them changes nothing). */
export interface BoardState {
  fields: Field[];
  /** In creation order, the order of the pages. */
  cards: Card[];
  /** Comments by card id, oldest first. */
  comments: Record<string, Comment[]>;
  webhooks: WebhookStats;
}

/** Board id → its state. */
export type EmulatorState = Record<string, BoardState>;

/** One request as received (the /__emulator/ paths are not recorded). */
export interface RecordedRequest {
  method: string;
  /** The request target as sent: path and query, still percent-encoded. */
  path: string;
  /** Lower-case header names; the x-token value is replaced by "***". */
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body of a POST, when it parsed. */
  body?: unknown;
  /** Status answered; 0 when the connection was reset on purpose (fault) or is still pending. */
  status: number;
  /** Date.now() when the request arrived. */
  time: number;
}

/** A started emulator. */
export interface RunningEmulator {
  /** Base URL, e.g. http://127.0.0.1:4010 (no trailing slash). */
  url: string;
  port: number;
  boards: Record<string, BoardSettings>;
  state(): EmulatorState;
  requests(): RecordedRequest[];
  resetRequests(): void;
  /** Replace the fault spec (undefined: no faults); throws FaultSpecError on a bad spec. */
  setFaults(spec: string | undefined): void;
  /** Stop listening, drop connections, stop webhook retries. */
  close(): Promise<void>;
}
