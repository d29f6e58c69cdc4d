// The engine's sending slots: a counting semaphore. A row holds a slot while it may send; a row waiting for
// something else (a re-check of the board, a verdict on its journal record, the Update Mode probe) gives
// its slot up, so waiting rows never block the reader. The reader, and rows back from a wait, park until
// a slot frees.

/** At most `size` rows hold a slot; `active` counts the rows started and not yet ended, slot or not. */
export class Slots {
  /** Rows started and not ended (holding a slot or waiting without one). */
  active = 0;
  private sending = 0;
  private wakers: (() => void)[] = [];
  /** The reader, parked in start() until a slot frees; the slot is taken for it before it wakes. */
  private wakeReader: (() => void) | undefined;
  private readonly parkReader = (resolve: () => void) => {
    this.wakeReader = resolve;
  };
  private readonly readerCheck = () => {
    const wake = this.wakeReader;
    if (wake === undefined || this.sending >= this.size) return;
    this.wakeReader = undefined;
    this.sending++;
    this.active++;
    wake();
  };

  constructor(private readonly size: number) {}

  /** Wait for a slot and take it. */
  async take(): Promise<void> {
    while (this.sending >= this.size) await this.parked();
    this.sending++;
  }

  /**
   * Give a slot back: every parked waiter looks again, then the reader. With no waiter but the reader (an
   * import's steady state) the slot is handed to it at once: no array, no second look per row.
   */
  free(): void {
    this.sending--;
    if (this.wakers.length === 0) return this.readerCheck();
    const ws = this.wakers;
    this.wakers = [];
    for (const w of ws) w();
    // After the waiters' own looks (each a microtask queued just now): rows back from a wait go first.
    if (this.wakeReader !== undefined) queueMicrotask(this.readerCheck);
  }

  /**
   * A row starts: it takes a slot (backpressure: the reader waits while every slot is held). Undefined when
   * it took one at once: the reader then goes on without a promise made and awaited for every row. One
   * reader: a second start() before the first resolves is a bug.
   */
  start(): Promise<void> | undefined {
    if (this.sending < this.size) {
      this.sending++;
      this.active++;
      return undefined;
    }
    if (this.wakeReader !== undefined) throw new Error('Slots.start: the reader is already waiting');
    return new Promise<void>(this.parkReader);
  }

  /** A row ends, whatever its end: its slot frees. */
  end(): void {
    this.active--;
    this.free();
  }

  /** Wait for `promise` without holding a slot, then take one again (a whole batch resumes at once: back to at most `size`). */
  async unslotted<T>(promise: Promise<T>): Promise<T> {
    this.free();
    try {
      return await promise;
    } finally {
      await this.take();
    }
  }

  /** Resolves once every row started has ended. */
  async drained(): Promise<void> {
    while (this.active > 0) await this.parked();
  }

  private parked(): Promise<void> {
    return new Promise<void>((resolve) => this.wakers.push(resolve));
  }
}
