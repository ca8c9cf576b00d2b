/**
 * The sandbox's rate limiter: CONTRACT.md "Limits" taken literally. A request is accepted only if
 * fewer than `burstPerSecond` accepted requests fall in the last 1000 ms and fewer than
 * `ratePerMinute` in the last 60 000 ms, and the UTC day's cap is not spent. A window "the last
 * 1000 ms" at time t holds the requests at times > t - 1000, so two requests exactly 1000 ms apart
 * never share a span. Rejected requests are not recorded. All arithmetic is here, time comes from
 * the injected clock, so the limiter is tested with FakeClock.
 */
import type { PlanLimits } from './plans.js';
import type { Clock } from '../clock.js';

export const SECOND_MS = 1000;
export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

export type LimitDecision =
  { allowed: true } | { allowed: false; reason: 'rate' | 'daily'; retryAtMs: number };

export interface KeyUsage {
  /** Accepted request times within the last minute, ascending. */
  times: number[];
  /** Start of the UTC day that `usedToday` counts. */
  dayStartMs: number;
  usedToday: number;
}

export function utcDayStart(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** How many of the ascending `times` are later than `after` (binary search: windows can be big). */
function countAfter(times: readonly number[], after: number): number {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((times[mid] as number) > after) hi = mid;
    else lo = mid + 1;
  }
  return times.length - lo;
}

/**
 * Pure decision for one request at `nowMs`. When rejected for rate, `retryAtMs` is the first
 * instant at which both windows have a free slot (if nobody else takes it first).
 */
export function decide(usage: KeyUsage, limits: PlanLimits, nowMs: number): LimitDecision {
  const usedToday = usage.dayStartMs === utcDayStart(nowMs) ? usage.usedToday : 0;
  if (limits.dailyCap !== null && usedToday >= limits.dailyCap) {
    return { allowed: false, reason: 'daily', retryAtMs: utcDayStart(nowMs) + DAY_MS };
  }
  const inSecond = countAfter(usage.times, nowMs - SECOND_MS);
  const inMinute = countAfter(usage.times, nowMs - MINUTE_MS);
  if (inSecond < limits.burstPerSecond && inMinute < limits.ratePerMinute) return { allowed: true };
  // With n >= L requests in a window of limit L, a slot frees when the L-th newest leaves it; the
  // window never holds more than L (rejections are not recorded), but the arithmetic need not care.
  const freeAt = (limit: number, span: number): number => {
    const leaving = usage.times[usage.times.length - limit];
    return leaving === undefined ? nowMs + span : leaving + span;
  };
  let retryAtMs = nowMs;
  if (inSecond >= limits.burstPerSecond)
    retryAtMs = Math.max(retryAtMs, freeAt(limits.burstPerSecond, SECOND_MS));
  if (inMinute >= limits.ratePerMinute)
    retryAtMs = Math.max(retryAtMs, freeAt(limits.ratePerMinute, MINUTE_MS));
  return { allowed: false, reason: 'rate', retryAtMs };
}

/** Records an accepted request at `nowMs`, dropping times that left the minute window. */
export function record(usage: KeyUsage, nowMs: number): void {
  const day = utcDayStart(nowMs);
  if (usage.dayStartMs !== day) {
    usage.dayStartMs = day;
    usage.usedToday = 0;
  }
  usage.usedToday++;
  usage.times.push(nowMs);
  let drop = 0;
  while (drop < usage.times.length && (usage.times[drop] as number) <= nowMs - MINUTE_MS) drop++;
  if (drop > 0) usage.times.splice(0, drop);
}

/** Per-key limiter state around `decide` and `record`. */
export class SlidingWindowLimiter {
  private readonly usage = new Map<string, KeyUsage>();

  constructor(
    private limits: PlanLimits,
    private readonly clock: Clock,
  ) {}

  /** Accepts (and records) or rejects one request for `key` at the clock's current time. */
  tryAcquire(key: string): LimitDecision {
    const now = this.clock.now();
    const usage = this.usageOf(key);
    const decision = decide(usage, this.limits, now);
    if (decision.allowed) record(usage, now);
    return decision;
  }

  usedToday(key: string): number {
    const usage = this.usage.get(key);
    return usage && usage.dayStartMs === utcDayStart(this.clock.now()) ? usage.usedToday : 0;
  }

  getLimits(): PlanLimits {
    return { ...this.limits };
  }

  setLimits(limits: PlanLimits): void {
    this.limits = { ...limits };
  }

  /** Forgets every window and daily count. */
  reset(): void {
    this.usage.clear();
  }

  private usageOf(key: string): KeyUsage {
    let usage = this.usage.get(key);
    if (!usage) {
      usage = { times: [], dayStartMs: utcDayStart(this.clock.now()), usedToday: 0 };
      this.usage.set(key, usage);
    }
    return usage;
  }
}
