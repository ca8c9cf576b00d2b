import { sleep, type Clock } from '../../util/clock.js';
import { CrmDailyLimitError } from '../errors.js';
import { InMemoryCrmLedger, type CrmSlotLedger, type SlotGrant } from '../limits/ledger.js';
import type { CrmUsage } from '../types.js';

export interface ApiBudgetOptions {
  /**
   * Share of the org's daily API allowance left untouched for other integrations and people
   * (default 0.05): crm-sync stops when fewer than that many requests remain.
   */
  reserveFraction: number;
  /** At least this many requests are kept in reserve (default 50). */
  reserveMin: number;
  /**
   * How long to hold requests once the reserve is reached or Salesforce answers
   * REQUEST_LIMIT_EXCEEDED (default 15 min): the allowance is a rolling 24-hour window, so
   * usage drops gradually; one request after the pause reads the new usage.
   */
  pauseMs: number;
}

export const DEFAULT_BUDGET: ApiBudgetOptions = {
  reserveFraction: 0.05,
  reserveMin: 50,
  pauseMs: 15 * 60_000,
};

const LIMIT_INFO = /api-usage=(\d+)\/(\d+)/;

/** A call holding its slot: the grant, and when this process asked for it. */
export interface BudgetSlot {
  grant: SlotGrant;
  askedAt: number;
}

/**
 * The org's daily API allocation, fed by the `Sforce-Limit-Info` header of every response. It is
 * per org, so replicas keep it in one CrmSlotLedger in the database (src/store/crmSlotLedger.ts):
 * each SDK operation takes a slot there first, and the allocation's reserve holds every process
 * once the org's usage, less what the last report may have missed, reaches it (crm/limits/slots.ts).
 */
export class ApiBudget {
  private requests = 0;
  private used: number | undefined;
  private limit: number | undefined;
  private blockedUntil = 0;
  private readonly held = new Set<BudgetSlot>();
  /** The start of the latest slot granted here, when none is in flight. */
  private lastStart = Infinity;
  private readonly ledger: CrmSlotLedger;

  constructor(
    private readonly clock: Clock,
    private readonly opts: ApiBudgetOptions = DEFAULT_BUDGET,
    ledger?: CrmSlotLedger,
  ) {
    this.ledger = ledger ?? new InMemoryCrmLedger(clock);
  }

  /** Counts one HTTP request (an SDK operation may make several: pages, a session refresh). */
  onRequest(): void {
    this.requests++;
  }

  /** Reads `Sforce-Limit-Info: api-usage=N/LIMIT` (also the newer `…; api-bursts=…` form). */
  onLimitInfo(header: string | undefined): void {
    const m = header ? LIMIT_INFO.exec(header) : null;
    if (!m) return;
    this.used = Number(m[1]);
    this.limit = Number(m[2]);
    // The response came to one of the operations in flight: the earliest of them stands for it.
    const from = Math.min(...[...this.held].map((h) => h.grant.startedAt), this.lastStart);
    if (Number.isFinite(from))
      this.ledger.report({ limit: this.limit, remaining: this.limit - this.used }, from);
  }

  /** Salesforce said REQUEST_LIMIT_EXCEEDED: every process holds its requests for `pauseMs`. */
  pause(): void {
    this.blockedUntil = Math.max(this.blockedUntil, this.clock.now() + this.opts.pauseMs);
    this.ledger.pause(this.opts.pauseMs, 'all', 'daily').catch(() => undefined);
  }

  /**
   * Takes a slot for one SDK operation; throws CrmDailyLimitError, before any request is spent,
   * while the allocation is held. Hand the slot back with `release`.
   */
  async acquire(): Promise<BudgetSlot> {
    for (;;) {
      const askedAt = this.clock.now();
      const wait = this.blockedUntil - askedAt;
      if (wait > 0) throw this.limitError(wait);
      const got = await this.ledger.acquire({
        lane: 'call',
        limit: Infinity,
        windowMs: 0,
        dailyReserve: this.reserve(this.limit ?? 0),
        dailyHold: { kind: 'pause', ms: this.opts.pauseMs },
      });
      if (got.granted) {
        const slot = { grant: got.slot, askedAt };
        this.held.add(slot);
        this.lastStart = got.slot.startedAt;
        return slot;
      }
      if (got.daily) {
        this.blockedUntil = Math.max(this.blockedUntil, this.clock.now() + got.waitMs);
        throw this.limitError(got.waitMs);
      }
      // Another operation is reading the new usage after a pause (slots.ts, probing).
      await sleep(this.clock, got.waitMs);
    }
  }

  release(slot: BudgetSlot): void {
    this.held.delete(slot);
    this.ledger.release(slot.grant, this.clock.now() - slot.askedAt);
  }

  get pauseMs(): number {
    return this.opts.pauseMs;
  }

  usage(): CrmUsage {
    const now = this.clock.now();
    return {
      requests: this.requests,
      remaining:
        this.used === undefined || this.limit === undefined ? undefined : Math.max(0, this.limit - this.used),
      limit: this.limit,
      rateLimitedUntil: this.blockedUntil > now ? this.blockedUntil : undefined,
    };
  }

  private limitError(waitMs: number): CrmDailyLimitError {
    const used = this.used === undefined ? '' : ` (${this.used}/${this.limit} used)`;
    return new CrmDailyLimitError(
      `Salesforce API allowance nearly spent${used}; holding requests to keep the reserve`,
      'salesforce',
      undefined,
      waitMs,
    );
  }

  private reserve(limit: number): number {
    return Math.max(this.opts.reserveMin, Math.ceil(limit * this.opts.reserveFraction));
  }
}
