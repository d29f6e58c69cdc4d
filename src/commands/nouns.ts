// The command groups and their one-line summaries, in the order `cardboard --help` lists them. Stated once:
// program.ts lists a group with it without loading the group's module, and the group describes itself with it.
// Plain data with no imports, so reading it costs nothing at start-up.

/** The command groups of the program, each with the summary both help pages show. */
export const NOUNS = [
  { name: 'board', summary: 'Store board credentials and pick the default board' },
  { name: 'schema', summary: "Show the board's fields with their exact, case-sensitive names" },
  { name: 'card', summary: 'Get, create/update (put) and list cards' },
  { name: 'comment', summary: 'Post a comment on a card' },
  { name: 'import', summary: 'Import cards from CSV or JSON: exact mapping, only what changed, resumable' },
  { name: 'webhook', summary: 'Listen for, record, forward, replay and send webhook deliveries' },
  { name: 'mirror', summary: 'Keep a copy of a board in SQLite or PostgreSQL, and answer questions from it' },
  { name: 'query', summary: "Run read-only SQL over the board's mirror (no request)" },
  { name: 'api', summary: "Send one request of your own with the board's token (like gh api)" },
  { name: 'emulator', summary: 'Run a local Card Board Service for offline use and tests (state in memory)' },
  { name: 'completion', summary: 'Print a bash, zsh or fish completion script (commands, flags, aliases, fields)' },
] as const;

/** The name of a command group. */
export type NounName = (typeof NOUNS)[number]['name'];

/** The summary of the group `name`: its description in its own help and its line in `cardboard --help`. */
export function nounSummary(name: NounName): string {
  return NOUNS.find((noun) => noun.name === name)!.summary;
}
