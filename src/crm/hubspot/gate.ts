import { sleep, type Clock } from '../../util/clock.js';
import { CrmDailyLimitError } from '../errors.js';
import { InMemoryCrmLedger, type Acquired, type CrmSlotLedger, type SlotGrant } from '../limits/ledger.js';
import type { CrmUsage } from '../types.js';

/**
 * The HubSpot request budget: every request waits here for a slot. It keeps under HubSpot's
 * rolling 10-second limit (a sliding window sized by the `X-HubSpot-RateLimit-Max`/
 * `-Interval-Milliseconds` headers), caps this process's concurrency, holds everything after a
 * 429, and refuses to send once the reported daily allowance is spent. HubSpot counts a request
 * when it arrives, somewhere between our start and the response, so a request holds its window
 * slot from its start until the window has passed after its response (src/crm/limits/slots.ts).
 * The slots are kept in a CrmSlotLedger: this process's own, or, with replicas, one shared
 * through the database, since the limits are per app and per account, not per process.
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

/** A request holding a slot: its grant, and when this process asked for it. */
interface Held {
  grant: SlotGrant;
  askedAt: number;
}

export class RequestGate {
  private perWindow: number;
  private windowMs: number;
  private readonly share: number;
  private readonly maxConcurrent: number;
  private readonly searchesPerSecond: number;
  private readonly ledger: CrmSlotLedger;
  /** Requests of this process asking the ledger or in flight (the concurrency cap). */
  private busy = 0;
  private readonly held = new Set<Held>();
  private waiters: (() => void)[] = [];
  /** Live requests waiting for a slot: the others wait until none is. */
  private liveWaiting = 0;
  private pausedUntil = 0;
  private searchPausedUntil = 0;
  private requests = 0;
  private dailyBlockedUntil = 0;
  /** What the last response here reported of the daily allowance, for status. */
  private dailyLimit: number | undefined;
  private dailyRemaining: number | undefined;
  /** The start of the latest slot granted here, when none is in flight. */
  private lastStart = Infinity;

  constructor(
    private readonly clock: Clock,
    options: GateOptions = {},
    /** Where slots are recorded: default this process alone; shared through the database by replicas. */
    ledger?: CrmSlotLedger,
  ) {
    this.share = options.share ?? 0.9;
    this.perWindow = this.shareOf(options.perWindow ?? 100);
    this.windowMs = options.windowMs ?? 10_000;
    this.maxConcurrent = options.maxConcurrent ?? 5;
    this.searchesPerSecond = options.searchesPerSecond ?? 5;
    this.isLive = options.isLive;
    this.ledger = ledger ?? new InMemoryCrmLedger(clock);
  }

  private readonly isLive: (() => boolean) | undefined;

  /** Waits for a slot in `lane`, then runs `fn` (exactly one HTTP request). */
  async run<T>(fn: () => Promise<T>, lane: Lane = 'general'): Promise<T> {
    const live = this.isLive?.() ?? false;
    if (live) this.liveWaiting += 1;
    let slot: Held;
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
      this.ledger.release(slot.grant, this.clock.now() - slot.askedAt);
      this.held.delete(slot);
      this.busy -= 1;
      this.wakeAll();
    }
  }

  /** Wakes every waiter: each re-checks for itself, and none is left behind if one gives up. */
  private wakeAll(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Of a limit, what a request not for a live call may use: one slot less when live ones are known. */
  private forOthers(limit: number, live: boolean): number {
    return live || !this.isLive || limit <= 1 ? limit : limit - 1;
  }

  /** Holds every request, of every process sharing the ledger, until `untilMs` (after a ten-second-window 429). */
  pauseUntil(untilMs: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, untilMs);
    this.share_(this.ledger.pause(untilMs - this.clock.now(), 'all'));
  }

  /** Holds searches only until `untilMs` (after a search-limit 429); other requests go on. */
  pauseSearchesUntil(untilMs: number): void {
    this.searchPausedUntil = Math.max(this.searchPausedUntil, untilMs);
    this.share_(this.ledger.pause(untilMs - this.clock.now(), 'search'));
  }

  /** The daily allowance is spent (a DAILY 429): refuse requests until `untilMs`. */
  blockDailyUntil(untilMs: number): void {
    this.dailyBlockedUntil = Math.max(this.dailyBlockedUntil, untilMs);
    this.share_(this.ledger.pause(untilMs - this.clock.now(), 'all', 'daily'));
  }

  /** A pause recorded for the others is best effort: this process holds it anyway. */
  private share_(recorded: Promise<void>): void {
    recorded.catch(() => undefined);
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
    // Someone else sharing the app used the window up: wait it out rather than draw a 429.
    if (num('remaining') === 0) this.pauseUntil(this.clock.now() + this.windowMs);
    const limit = num('daily');
    const remaining = num('daily-remaining');
    this.dailyLimit = limit ?? this.dailyLimit;
    this.dailyRemaining = remaining ?? this.dailyRemaining;
    // The response came to one of the requests in flight: the earliest of them stands for it.
    const from = Math.min(...[...this.held].map((h) => h.grant.startedAt), this.lastStart);
    if (limit !== undefined && remaining !== undefined && Number.isFinite(from)) {
      this.ledger.report({ limit, remaining }, from);
    }
  }

  usage(): CrmUsage {
    const now = this.clock.now();
    const until = Math.max(this.pausedUntil, this.dailyBlockedUntil);
    return {
      requests: this.requests,
      remaining: this.dailyRemaining,
      limit: this.dailyLimit,
      rateLimitedUntil: until > now ? until : undefined,
    };
  }

  private shareOf(limit: number): number {
    return Math.max(1, Math.floor(limit * this.share));
  }

  private dailyLimitError(waitMs: number): CrmDailyLimitError {
    this.dailyBlockedUntil = Math.max(this.dailyBlockedUntil, this.clock.now() + waitMs);
    return new CrmDailyLimitError(
      'HubSpot daily limit reached; requests resume after the daily reset',
      'hubspot',
      undefined,
      waitMs,
    );
  }

  private async acquire(lane: Lane, live: boolean): Promise<Held> {
    const search = lane === 'search';
    for (;;) {
      const now = this.clock.now();
      if (now < this.dailyBlockedUntil) throw this.dailyLimitError(this.dailyBlockedUntil - now);
      const heldBack = !live && this.liveWaiting > 0;
      if (heldBack || this.busy >= this.forOthers(this.maxConcurrent, live)) {
        await new Promise<void>((resolve) => this.waiters.push(resolve));
        continue;
      }
      const paused = search ? Math.max(this.pausedUntil, this.searchPausedUntil) : this.pausedUntil;
      if (paused > now) {
        await sleep(this.clock, paused - now);
        continue;
      }
      this.busy += 1;
      let got: Acquired;
      try {
        got = await this.ledger.acquire({
          lane,
          limit: this.forOthers(search ? this.searchesPerSecond : this.perWindow, live),
          windowMs: search ? SEARCH_WINDOW_MS : this.windowMs,
          dailyReserve: 0,
          dailyHold: { kind: 'midnight' },
        });
      } catch (error) {
        this.busy -= 1;
        this.wakeAll();
        throw error;
      }
      if (got.granted) {
        this.requests += 1;
        const slot = { grant: got.slot, askedAt: now };
        this.lastStart = got.slot.startedAt;
        this.held.add(slot);
        return slot;
      }
      this.busy -= 1;
      this.wakeAll();
      if (got.daily) throw this.dailyLimitError(got.waitMs);
      await sleep(this.clock, got.waitMs);
    }
  }
}
