/**
 * How many slots of the minute window to keep free for live requests, learned from when live
 * requests arrived before (pure: times come in as arguments). Why predict, and how: docs/budget.md,
 * "Live reserve".
 */
import { DAY_MS } from './window.js';

/** Arrivals are counted per bucket of this length; the reserve changes at bucket boundaries. */
export const RESERVE_BUCKET_MS = 10_000;
const HALF_HOUR_MS = 30 * 60_000;

export interface LiveReserveOptions {
  /**
   * How far ahead the prediction looks; default 70 s. A reserve raised at t frees slots only as
   * the backfill starts of (t - 60 s, t] age out; raised about 60 s ahead, half the window is free
   * 30 s before the expected burst, which covers calls that start a little early. Longer costs
   * more backfill for each predicted burst that does not come.
   */
  lookaheadMs?: number;
  /** Days looked back, default 7. */
  days?: number;
  /** Half hours looked back, default 4. */
  halfHours?: number;
  /** Weight of each step further back (day or half hour), 0..1; default 0.8. */
  decay?: number;
}

export class LiveReserve {
  private readonly lookaheadMs: number;
  private readonly days: number;
  private readonly halfHours: number;
  private readonly decay: number;
  /** Arrivals per bucket (epoch ms / RESERVE_BUCKET_MS); only non-empty buckets are kept. */
  private readonly buckets = new Map<number, number>();
  private newestBucket = Number.NEGATIVE_INFINITY;

  constructor(options: LiveReserveOptions = {}) {
    this.lookaheadMs = options.lookaheadMs ?? 70_000;
    this.days = options.days ?? 7;
    this.halfHours = options.halfHours ?? 4;
    this.decay = options.decay ?? 0.8;
    if (!(this.decay > 0 && this.decay <= 1)) throw new Error('LiveReserve decay must be in (0, 1]');
  }

  /** A live request (a call starting) arrived at `atMs`. */
  record(atMs: number): void {
    const bucket = Math.floor(atMs / RESERVE_BUCKET_MS);
    this.buckets.set(bucket, (this.buckets.get(bucket) ?? 0) + 1);
    if (bucket > this.newestBucket) {
      this.newestBucket = bucket;
      this.prune(atMs);
    }
  }

  /** Expected live requests in the next `lookaheadMs` after `nowMs` (a weighted maximum, not a mean). */
  expected(nowMs: number): number {
    let best = 0;
    for (let d = 1; d <= this.days; d++) {
      best = Math.max(best, this.decay ** (d - 1) * this.countIn(nowMs - d * DAY_MS));
    }
    for (let h = 1; h <= this.halfHours; h++) {
      best = Math.max(best, this.decay ** (h - 1) * this.countIn(nowMs - h * HALF_HOUR_MS));
    }
    return best;
  }

  /**
   * Slots of the minute window only live may take at `nowMs`: the expected live requests, at least
   * `floor` (the configured fixed reserve) and at most `limit - 1` (lower priorities keep one).
   */
  minuteReserve(nowMs: number, limit: number, floor: number): number {
    const wanted = Math.max(floor, Math.ceil(this.expected(nowMs) - 1e-9));
    return Math.max(0, Math.min(wanted, limit - 1));
  }

  /** Arrivals in [fromMs, fromMs + lookaheadMs), at bucket resolution. */
  private countIn(fromMs: number): number {
    const first = Math.floor(fromMs / RESERVE_BUCKET_MS);
    const last = Math.floor((fromMs + this.lookaheadMs - 1) / RESERVE_BUCKET_MS);
    let count = 0;
    for (let b = first; b <= last; b++) count += this.buckets.get(b) ?? 0;
    return count;
  }

  private prune(nowMs: number): void {
    const oldest = Math.floor((nowMs - this.days * DAY_MS - this.lookaheadMs) / RESERVE_BUCKET_MS);
    for (const bucket of this.buckets.keys()) if (bucket < oldest) this.buckets.delete(bucket);
  }
}
