// Plain types of the service's records (spec section 2). The only code the client and the emulator share.

/** A field of a board's schema (spec 2.3): its exact, case-sensitive name and a UUID; other properties not shown. */
export interface Field {
  name: string;
  uuid: string;
  [property: string]: unknown;
}

/** A card (spec 2.2): `_id` plus values keyed by exact field name. */
export interface Card {
  _id: string;
  [field: string]: unknown;
}

/** A comment on a card (spec 2.1). */
export interface Comment {
  id: string;
  userId: string;
  content: string;
  seenByUsers: string[];
  userName: string;
  /** ISO 8601 UTC with milliseconds. */
  createdAt: string;
}

/** The two Update Modes of a board (spec 2.4, 4.3). */
export type UpdateMode = 'Always Create New' | 'Update if exists';
