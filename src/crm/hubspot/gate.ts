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
 *
 * Searches are a lane of their own: "The search endpoints are rate limited to five requests per
 * second" (HubSpot CRM search guide, "Limitations") and the ten-second limit "excludes the CRM
 * Search API" (HubSpot API usage guidelines). So a search takes a slot in a strict sliding
 * second instead of the ten-second window, and a search 429 holds only searches.
 *
 * Given `isLive`, requests made for a live call go first: while one waits, no other takes a freed
 * slot, and one slot of the concurrency, of the window and of the search second is kept for them,
 * so a call's lookup does not wait behind a backfill that has filled the window.
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
  /** Searches per sliding second (default 5, HubSpot's documented search limit). */
  searchesPerSecond?: number;
  /** Whether the request about to wait is for a live call (default: none is). */
  isLive?: () => boolean;
}

/** Which limit a request counts against. */
export type Lane = 'general' | 'search';

/** The sliding window of the search limit. */
export const SEARCH_WINDOW_MS = 1_000;

/** One per request in a window: Infinity while in flight, then the time of its response. */
type Slot = { at: number };

export class RequestGate {
  private perWindow: number;
  private windowMs: number;
  private readonly share: number;
  private readonly maxConcurrent: number;
  private readonly searchesPerSecond: number;
  private slots: Slot[] = [];
  private searchSlots: Slot[] = [];
  private inFlight = 0;
  private waiters: (() => void)[] = [];
  /** Live requests waiting for a slot: the others wait until none is. */
  private liveWaiting = 0;
  private pausedUntil = 0;
  private searchPausedUntil = 0;
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
    this.searchesPerSecond = options.searchesPerSecond ?? 5;
    this.isLive = options.isLive;
  }

  private readonly isLive: (() => boolean) | undefined;

  /** Waits for a slot in `lane`, then runs `fn` (exactly one HTTP request). */
  async run<T>(fn: () => Promise<T>, lane: Lane = 'general'): Promise<T> {
    const live = this.isLive?.() ?? false;
    if (live) this.liveWaiting += 1;
    let slot: Slot;
    try {
      slot = await this.acquire(lane, live);
    } finally {
      if (live) {
        this.liveWaiting -= 1;
        // The others held back for it look again.
        if (this.liveWaiting === 0) this.wakeAll();
      }
    }
    try {
      return await fn();
    } finally {
      slot.at = this.clock.now();
      this.inFlight -= 1;
      this.wakeAll();
    }
  }

  /** Wakes every waiter: each re-checks the window itself, and none is left behind if one gives up. */
  private wakeAll(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Of a limit, what a request not for a live call may use: one slot less when live ones are known. */
  private forOthers(limit: number, live: boolean): number {
    return live || !this.isLive || limit <= 1 ? limit : limit - 1;
  }

  /** Holds every request until `untilMs` (after a ten-second-window 429). */
  pauseUntil(untilMs: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, untilMs);
  }

  /** Holds searches only until `untilMs` (after a search-limit 429); other requests go on. */
  pauseSearchesUntil(untilMs: number): void {
    this.searchPausedUntil = Math.max(this.searchPausedUntil, untilMs);
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

  private async acquire(lane: Lane, live: boolean): Promise<Slot> {
    const search = lane === 'search';
    for (;;) {
      this.checkDaily();
      const now = this.clock.now();
      this.slots = this.slots.filter((s) => s.at > now - this.windowMs);
      this.searchSlots = this.searchSlots.filter((s) => s.at > now - SEARCH_WINDOW_MS);
      const paused = search ? Math.max(this.pausedUntil, this.searchPausedUntil) : this.pausedUntil;
      const pauseMs = Math.max(0, paused - now);
      const roomWait = search
        ? windowWait(this.searchSlots, this.forOthers(this.searchesPerSecond, live), SEARCH_WINDOW_MS, now)
        : windowWait(this.slots, this.forOthers(this.perWindow, live), this.windowMs, now);
      const heldBack = !live && this.liveWaiting > 0;
      if (heldBack || this.inFlight >= this.forOthers(this.maxConcurrent, live) || roomWait === 'release') {
        await new Promise<void>((resolve) => this.waiters.push(resolve));
        continue;
      }
      const waitMs = Math.max(pauseMs, roomWait);
      if (waitMs > 0) {
        await sleep(this.clock, waitMs);
        continue;
      }
      const slot = { at: Infinity };
      (search ? this.searchSlots : this.slots).push(slot);
      this.inFlight += 1;
      this.requests += 1;
      if (this.dailyRemaining !== undefined) this.dailyRemaining -= 1;
      return slot;
    }
  }
}

/** Ms until a window of `limit` has room, or 'release' when only a request in flight finishing can make room. */
function windowWait(slots: Slot[], limit: number, windowMs: number, now: number): number | 'release' {
  const excess = slots.length - limit + 1;
  if (excess <= 0) return 0;
  const done = slots
    .map((s) => s.at)
    .filter((at) => at !== Infinity)
    .sort((a, b) => a - b);
  const freeing = done[excess - 1];
  return freeing === undefined ? 'release' : freeing + windowMs - now;
}
