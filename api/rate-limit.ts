/**
 * Fixed-window request quota per token (per client IP for unauthenticated calls), kept in memory
 * per API process. Headers follow the IETF RateLimit header fields draft:
 *   RateLimit-Policy: "default";q=<quota>;w=<window>
 *   RateLimit: "default";r=<remaining>;t=<seconds to reset>
 * With N API replicas a client may get up to N x quota; docs/decisions.md explains the choice.
 */
export interface RateDecision {
  allowed: boolean;
  remaining: number;
  resetSeconds: number;
}

export class RateLimiter {
  private windows = new Map<string, { start: number; count: number }>();

  constructor(
    readonly quota: number,
    readonly windowSeconds: number,
    private readonly now: () => number = Date.now,
  ) {}

  get policyHeader(): string {
    return `"default";q=${this.quota};w=${this.windowSeconds}`;
  }

  /** Counts one request for `key`. */
  hit(key: string): RateDecision {
    const now = this.now();
    const windowMs = this.windowSeconds * 1000;
    let w = this.windows.get(key);
    if (!w || now - w.start >= windowMs) {
      if (this.windows.size > 100_000) this.sweep(now, windowMs);
      w = { start: now, count: 0 };
      this.windows.set(key, w);
    }
    const resetSeconds = Math.max(1, Math.ceil((w.start + windowMs - now) / 1000));
    if (w.count >= this.quota) return { allowed: false, remaining: 0, resetSeconds };
    w.count += 1;
    return { allowed: true, remaining: this.quota - w.count, resetSeconds };
  }

  static header(d: RateDecision): string {
    return `"default";r=${d.remaining};t=${d.resetSeconds}`;
  }

  private sweep(now: number, windowMs: number): void {
    for (const [key, w] of this.windows) if (now - w.start >= windowMs) this.windows.delete(key);
  }
}
