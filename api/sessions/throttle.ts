/**
 * Sign-in throttling that slows a guesser without locking the owner out. Only failed sign-ins
 * count, per login-and-address and per address (any login), in memory per API process. Past
 * `limit` failures a key waits before its next attempt, the wait doubling with each further
 * failure (30 s, 1 min, 2 min... at most the 15-minute window); failures are forgotten a
 * window after the last wait ended. There is deliberately no limit
 * per login alone: that would let anyone lock a member out by failing from their own address.
 * A successful sign-in clears its login-and-address count and never counts itself.
 */

/** First wait once the limit is reached (seconds); it doubles with each further failure. */
const BASE_WAIT_SECONDS = 30;

interface Failures {
  count: number;
  /** When the last failure happened (ms). */
  last: number;
}

export class SignInThrottle {
  private readonly failures = new Map<string, Failures>();

  constructor(
    /** Failures a key may have before it waits. */
    readonly limit: number,
    /** How long a failure is remembered (s); also the longest wait. */
    readonly windowSeconds: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds before `login` may be tried from `address` (0: now). */
  waitSeconds(login: string, address: string): number {
    return Math.max(this.waitOf(pairKey(login, address)), this.waitOf(addressKey(address)));
  }

  /** Counts a failed sign-in of `login` from `address`. */
  failed(login: string, address: string): void {
    const now = this.now();
    if (this.failures.size > 100_000) this.sweep(now);
    for (const key of [pairKey(login, address), addressKey(address)]) {
      const f = this.live(key, now);
      this.failures.set(key, { count: (f?.count ?? 0) + 1, last: now });
    }
  }

  /** A successful sign-in: its login-and-address starts afresh (the address keeps its count). */
  succeeded(login: string, address: string): void {
    this.failures.delete(pairKey(login, address));
  }

  /** A key's failures, forgotten a window after its wait ended (so waits keep doubling). */
  private live(key: string, now: number): Failures | undefined {
    const f = this.failures.get(key);
    if (f && now - f.last >= (this.waitAfter(f) + this.windowSeconds) * 1000) {
      this.failures.delete(key);
      return undefined;
    }
    return f;
  }

  private waitOf(key: string): number {
    const now = this.now();
    const f = this.live(key, now);
    if (!f) return 0;
    return Math.max(0, Math.ceil((f.last + this.waitAfter(f) * 1000 - now) / 1000));
  }

  /** The wait after a key's last failure (s): none below the limit, then doubling. */
  private waitAfter(f: Failures): number {
    if (f.count < this.limit) return 0;
    return Math.min(this.windowSeconds, BASE_WAIT_SECONDS * 2 ** (f.count - this.limit));
  }

  private sweep(now: number): void {
    for (const [key, f] of this.failures)
      if (now - f.last >= (this.waitAfter(f) + this.windowSeconds) * 1000)
        this.failures.delete(key);
  }
}

const pairKey = (login: string, address: string) => `pair:${login.toLowerCase()}\u0000${address}`;
const addressKey = (address: string) => `address:${address}`;
