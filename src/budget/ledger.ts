/**
 * The slot ledger of a single process: start times of the last minutes and the day's count, in
 * memory. A database-backed ledger shared by several processes implements the same interface.
 */
import type { LedgerSnapshot, SlotGrant, SlotGrants, SlotLedger, SlotRequest } from './types.js';
import {
  MINUTE_MS,
  SECOND_MS,
  countInWindow,
  decideSlots,
  insertAscending,
  slotCheckFor,
  utcDayStart,
} from './window.js';

/** Starts older than this cannot matter to any window, even with a generous margin. */
const KEEP_MS = 2 * MINUTE_MS;

export class InMemorySlotLedger implements SlotLedger {
  /** Ascending start times of (at least) the last KEEP_MS. */
  private starts: number[] = [];
  private day = Number.NEGATIVE_INFINITY;
  private usedInDay = 0;
  private pausedUntil: number | null = null;
  private pauseReason: 'rate' | 'daily' | null = null;

  // Everything happens synchronously inside each call, so each acquire is atomic even though the
  // interface is async (as a database-backed ledger must be).
  async acquire(request: SlotRequest): Promise<SlotGrant> {
    const grants = await this.acquireMany(request, 1);
    return grants.granted ? { granted: true } : grants;
  }

  async acquireMany(request: SlotRequest, wanted: number): Promise<SlotGrants> {
    const { nowMs } = request;
    this.prune(nowMs);
    const decision = decideSlots(
      slotCheckFor(request, {
        starts: this.starts,
        usedToday: this.usedOn(nowMs),
        pausedUntil: this.pausedUntil,
        pausedForDailyCap: this.pauseReason === 'daily',
      }),
      wanted,
    );
    if (!decision.allowed) {
      return { granted: false, retryAtMs: decision.retryAtMs, dailyCapReached: decision.dailyCapReached };
    }
    for (let i = 0; i < decision.count; i++) this.record(nowMs);
    return { granted: true, count: decision.count };
  }

  async pauseUntil(untilMs: number, reason: 'rate' | 'daily' = 'rate', _nowMs?: number): Promise<void> {
    const current = this.pausedUntil ?? Number.NEGATIVE_INFINITY;
    if (untilMs > current || (untilMs === current && reason === 'daily')) {
      this.pausedUntil = untilMs;
      this.pauseReason = reason;
    }
  }

  async snapshot(nowMs: number): Promise<LedgerSnapshot> {
    return this.peek(nowMs);
  }

  peek(nowMs: number): LedgerSnapshot {
    const paused = this.pausedUntil !== null && this.pausedUntil > nowMs;
    return {
      usedToday: this.usedOn(nowMs),
      inLastSecond: countInWindow(this.starts, nowMs, SECOND_MS),
      inLastMinute: countInWindow(this.starts, nowMs, MINUTE_MS),
      pausedUntil: paused ? this.pausedUntil : null,
      pauseReason: paused ? this.pauseReason : null,
    };
  }

  private usedOn(nowMs: number): number {
    return utcDayStart(nowMs) === this.day ? this.usedInDay : 0;
  }

  private record(nowMs: number): void {
    // Kept ascending even if the clock stepped back (another process's clock, NTP).
    insertAscending(this.starts, nowMs);
    const day = utcDayStart(nowMs);
    if (day > this.day) {
      this.day = day;
      this.usedInDay = 0;
    }
    this.usedInDay++;
  }

  private prune(nowMs: number): void {
    let drop = 0;
    while (drop < this.starts.length && this.starts[drop]! <= nowMs - KEEP_MS) drop++;
    if (drop > 0) this.starts.splice(0, drop);
  }
}
