import { sleep, type Clock } from '../../util/clock.js';
import { CrmDailyLimitError } from '../errors.js';
import type { CrmUsage } from '../types.js';
import { msUntilUtcMidnight } from './errorMap.js';

/**
 * The HubSpot request budget of this process: every request waits here for a slot. It keeps
 * under HubSpot's rolling 10-second limit (a sliding window sized by the
 * `X-HubSpot-RateLimit-Max`/`-Interval-Milliseconds` headers), caps concurrency, holds everything
 * after a 429, and refuses to send once the reported daily allowance is spent. HubSpot counts a
 * request when it arrives, somewhere between our start and the response, so a request holds its
 * window slot from its start until the window has passed after its response.
 */
export interface GateOptions {
  /** Requests per window before any header was seen (default 100, HubSpot's private-app limit). */
  perWindow?: number;
  /** Window length before any header was seen (default 10,000 ms). */
  windowMs?: number;
  /** Share of the reported limit this process may use; the rest is left to other integrations (default 0.9). */
  share?: number;
  /** Requests in flight at once (default 5). */
  maxConcurrent?: number;
}

export class RequestGate {
  private perWindow: number;
  private windowMs: number;
  private readonly share: number;
  private readonly maxConcurrent: number;
  /** One per request in the window: Infinity while in flight, then the time of its response. */
  private slots: { at: number }[] = [];
  private inFlight = 0;
  private waiters: (() => void)[] = [];
  private pausedUntil = 0;
  private requests = 0;
  private dailyLimit: number | undefined;
  private dailyRemaining: number | undefined;
  private dailyBlockedUntil = 0;

  constructor(
    private readonly clock: Clock,
    options: GateOptions = {},
  ) {
    this.share = options.share ?? 0.9;
    this.perWindow = this.shareOf(options.perWindow ?? 100);
    this.windowMs = options.windowMs ?? 10_000;
    this.maxConcurrent = options.maxConcurrent ?? 5;
  }

  /** Waits for a slot, then runs `fn` (exactly one HTTP request). */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const slot = await this.acquire();
    try {
      return await fn();
    } finally {
      slot.at = this.clock.now();
      this.inFlight -= 1;
      // Wake every waiter: each re-checks the window itself, and none is left behind if one gives up.
      const waiters = this.waiters;
      this.waiters = [];
      for (const wake of waiters) wake();
    }
  }

  /** Holds every request until `untilMs` (after a 429). */
  pauseUntil(untilMs: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, untilMs);
  }

  /** The daily allowance is spent (a DAILY 429): refuse requests until `untilMs`. */
  blockDailyUntil(untilMs: number): void {
    this.dailyBlockedUntil = Math.max(this.dailyBlockedUntil, untilMs);
    this.dailyRemaining = 0;
  }

  /** Reads the X-HubSpot-RateLimit-* headers of any response (lower-cased names). */
  observe(headers: Record<string, string>): void {
    const num = (name: string) => {
      const v = headers[`x-hubspot-ratelimit-${name}`];
      const n = v === undefined ? NaN : Number(v);
      return Number.isFinite(n) ? n : undefined;
    };
    const max = num('max');
    const interval = num('interval-milliseconds');
    if (max !== undefined && max > 0) this.perWindow = this.shareOf(max);
    if (interval !== undefined && interval > 0) this.windowMs = interval;
    const remaining = num('remaining');
    // Someone else sharing the app used the window up: wait it out rather than draw a 429.
    if (remaining === 0) this.pauseUntil(this.clock.now() + this.windowMs);
    this.dailyLimit = num('daily') ?? this.dailyLimit;
    // The header counts requests HubSpot has answered; the others still in flight will use some too.
    const daily = num('daily-remaining');
    if (daily !== undefined) this.dailyRemaining = daily - Math.max(0, this.inFlight - 1);
  }

  usage(): CrmUsage {
    const now = this.clock.now();
    return {
      requests: this.requests,
      remaining: this.dailyRemaining,
      limit: this.dailyLimit,
      rateLimitedUntil:
        Math.max(this.pausedUntil, this.dailyBlockedUntil) > now
          ? Math.max(this.pausedUntil, this.dailyBlockedUntil)
          : undefined,
    };
  }

  private checkDaily(): void {
    const now = this.clock.now();
    if (this.dailyRemaining !== undefined && this.dailyRemaining <= 0 && this.dailyBlockedUntil <= now) {
      this.dailyBlockedUntil = now + msUntilUtcMidnight(now);
    }
    if (now < this.dailyBlockedUntil) {
      throw new CrmDailyLimitError(
        'HubSpot daily limit reached; requests resume after the daily reset',
        'hubspot',
        undefined,
        this.dailyBlockedUntil - now,
      );
    }
    // A new day: forget the spent count until a response reports the new one.
    if (this.dailyBlockedUntil > 0) {
      this.dailyBlockedUntil = 0;
      this.dailyRemaining = undefined;
    }
  }

  private shareOf(limit: number): number {
    return Math.max(1, Math.floor(limit * this.share));
  }

  private async acquire(): Promise<{ at: number }> {
    for (;;) {
      this.checkDaily();
      const now = this.clock.now();
      this.slots = this.slots.filter((s) => s.at > now - this.windowMs);
      const pauseMs = Math.max(0, this.pausedUntil - now);
      const windowWait = this.windowWait(now);
      if (this.inFlight >= this.maxConcurrent || windowWait === 'release') {
        await new Promise<void>((resolve) => this.waiters.push(resolve));
        continue;
      }
      const waitMs = Math.max(pauseMs, windowWait);
      if (waitMs > 0) {
        await sleep(this.clock, waitMs);
        continue;
      }
      const slot = { at: Infinity };
      this.slots.push(slot);
      this.inFlight += 1;
      this.requests += 1;
      if (this.dailyRemaining !== undefined) this.dailyRemaining -= 1;
      return slot;
    }
  }

  /** Ms until the window has room, or 'release' when only a request in flight finishing can make room. */
  private windowWait(now: number): number | 'release' {
    const excess = this.slots.length - this.perWindow + 1;
    if (excess <= 0) return 0;
    const done = this.slots
      .map((s) => s.at)
      .filter((at) => at !== Infinity)
      .sort((a, b) => a - b);
    const freeing = done[excess - 1];
    return freeing === undefined ? 'release' : freeing + this.windowMs - now;
  }
}
