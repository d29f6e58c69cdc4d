// Update Mode is not readable (spec 2.4 is UI-only): the first post with an `_id` goes alone, and its answer
// tells. The same `_id` back confirms the board updates, and every `_id` row may then go; another id back
// means Always Create New, and the run stops (row-life.ts) before the rows waiting here make duplicates.

/** The gate of `_id` rows until the board's Update Mode is known. */
export class ModeProbe {
  private confirmed = false;
  private probe: Promise<void> | undefined;
  /** Rows waiting for the probe's answer: idle, for the board re-check. */
  waiting = 0;

  /**
   * `unslotted`: how a row waits without holding a sending slot; `idle`: called as a row starts waiting
   * (the probe row itself may be waiting for a board re-check); `stop`: the run stopped, nothing waits.
   */
  constructor(
    private readonly unslotted: (p: Promise<void>) => Promise<void>,
    private readonly idle: () => void,
    private readonly stop: AbortSignal,
  ) {}

  /**
   * Wait until an `_id` row may go. Returns the release when this row is the probe (call it once its answer
   * has been judged, whatever it was), else undefined.
   */
  async pass(): Promise<(() => void) | undefined> {
    while (!this.confirmed && this.probe && !this.stop.aborted) {
      this.waiting++;
      this.idle();
      try {
        await this.unslotted(this.probe);
      } finally {
        this.waiting--;
      }
    }
    if (this.confirmed || this.stop.aborted) return undefined;
    let answered!: () => void;
    this.probe = new Promise<void>((resolve) => (answered = resolve));
    return () => {
      this.probe = undefined;
      answered();
    };
  }

  /** Whether the board is known to update a card posted with its `_id`. */
  get updatesById(): boolean {
    return this.confirmed;
  }

  /** The board updated a card by its `_id`: no `_id` row waits any more. */
  confirm(): void {
    this.confirmed = true;
  }
}
