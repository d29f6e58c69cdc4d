/** Per-token token buckets: `burst` capacity refilled at perMinute/60 per second. */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly perMs: number;

  constructor(
    perMinute: number,
    private readonly burst: number,
  ) {
    this.perMs = perMinute / 60_000;
  }

  /** Take one token for `key`: 0 when allowed, else the whole seconds (≥ 1) to wait for Retry-After. */
  take(key: string, now = Date.now()): number {
    let b = this.buckets.get(key);
    if (!b) {
      b = { tokens: this.burst, at: now };
      this.buckets.set(key, b);
    } else {
      b.tokens = Math.min(this.burst, b.tokens + (now - b.at) * this.perMs);
      b.at = now;
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.perMs / 1000));
  }
}
