import type { Clock } from '../../util/clock.js';
import { CrmDailyLimitError } from '../errors.js';
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

/** The per-CRM request budget, fed by the `Sforce-Limit-Info` header of every response. */
export class ApiBudget {
  private requests = 0;
  private used: number | undefined;
  private limit: number | undefined;
  private blockedUntil = 0;

  constructor(
    private readonly clock: Clock,
    private readonly opts: ApiBudgetOptions = DEFAULT_BUDGET,
  ) {}

  onRequest(): void {
    this.requests++;
  }

  /** Reads `Sforce-Limit-Info: api-usage=N/LIMIT` (also the newer `…; api-bursts=…` form). */
  onLimitInfo(header: string | undefined): void {
    const m = header ? LIMIT_INFO.exec(header) : null;
    if (!m) return;
    this.used = Number(m[1]);
    this.limit = Number(m[2]);
    if (this.limit - this.used <= this.reserve(this.limit)) this.pause();
  }

  /** Salesforce said REQUEST_LIMIT_EXCEEDED. */
  pause(): void {
    this.blockedUntil = Math.max(this.blockedUntil, this.clock.now() + this.opts.pauseMs);
  }

  /** Throws CrmDailyLimitError while paused, before any request is spent. */
  check(): void {
    const wait = this.blockedUntil - this.clock.now();
    if (wait > 0) {
      const used = this.used === undefined ? '' : ` (${this.used}/${this.limit} used)`;
      throw new CrmDailyLimitError(
        `Salesforce API allowance nearly spent${used}; holding requests to keep the reserve`,
        'salesforce',
        undefined,
        wait,
      );
    }
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

  private reserve(limit: number): number {
    return Math.max(this.opts.reserveMin, Math.ceil(limit * this.opts.reserveFraction));
  }
}
