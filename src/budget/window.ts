/**
 * Budget arithmetic, free of I/O and clocks: given the recorded request start times and `now`,
 * may a request start now, and if not, when. The window and its safety margin: docs/budget.md,
 * "Windows".
 */
import type { PlanLimits } from './plans.js';
import type { Priority, SlotRequest } from './types.js';

export const SECOND_MS = 1000;
export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

/** Start of the UTC day containing `ms`. */
export function utcDayStart(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** The next UTC midnight after `ms` (when the daily cap resets). */
export function nextUtcMidnight(ms: number): number {
  return utcDayStart(ms) + DAY_MS;
}

/**
 * Earliest time >= `nowMs` at which fewer than `allowed` of `starts` (ascending) lie in the span
 * (t - spanMs, t]. A start s leaves that span once t >= s + spanMs, so the answer is set by the
 * `allowed`-th most recent start. `allowed` <= 0 means never (Infinity).
 */
export function earliestInWindow(
  starts: readonly number[],
  nowMs: number,
  spanMs: number,
  allowed: number,
): number {
  if (allowed <= 0) return Infinity;
  const blocking = starts[starts.length - allowed];
  if (blocking === undefined) return nowMs;
  return Math.max(nowMs, blocking + spanMs);
}

/** Number of `starts` (ascending) in the span (nowMs - spanMs, nowMs]. */
export function countInWindow(starts: readonly number[], nowMs: number, spanMs: number): number {
  let count = 0;
  for (let i = starts.length - 1; i >= 0; i--) {
    const s = starts[i]!;
    if (s <= nowMs - spanMs) break;
    if (s <= nowMs) count++;
  }
  return count;
}

/**
 * Slots of a window that `priority` may fill: everything for live, the limit less the reserve for
 * the others. The reserve is clamped so lower priorities always keep at least one slot.
 */
export function windowAllowance(limit: number, reserve: number, priority: Priority): number {
  if (priority === 'live') return limit;
  return limit - Math.min(Math.max(0, reserve), limit - 1);
}

/** Requests of the day kept for live calls: `share` of the cap, rounded down (none when unlimited). */
export function dailyLiveReserve(cap: number | null, share: number): number {
  return cap === null ? 0 : Math.floor(cap * share);
}

/** Requests of the day that `priority` may use; null = unlimited. Same clamping as windows. */
export function dailyAllowance(cap: number | null, reserve: number, priority: Priority): number | null {
  if (cap === null) return null;
  if (priority === 'live') return cap;
  return cap - Math.min(Math.max(0, reserve), Math.max(0, cap - 1));
}

/**
 * The pace lower priorities keep: the plan's rate spread evenly over the minute (or the burst
 * spread over the second, if that is slower). Slots of a full minute window then free up evenly,
 * so a live request waits about one pace for one, not up to a minute behind a burst of backfill.
 */
export function paceFor(limits: PlanLimits): number {
  return Math.max(MINUTE_MS / limits.ratePerMinute, SECOND_MS / limits.burstPerSecond);
}

/** Start times are whole milliseconds: a pace finer than that can only be kept per millisecond. */
export const PACE_RESOLUTION_MS = 1;

/**
 * Earliest time >= `nowMs` at which a lower-priority start keeps the stream of ALL starts of the
 * last `spanMs` at one per `paceMs`: the j-th most recent start s_j must be at least j paces back,
 * less a tolerance of a quarter pace (at least PACE_RESOLUTION_MS, so a sub-millisecond pace lets
 * about 1 / pace starts share a millisecond rather than one). Counting live starts too makes
 * backfill give way to them, so the minute window does not fill before the minute is over;
 * anchoring on older starts (not only the latest) lets late timers catch up instead of drifting.
 */
export function paceEarliest(
  starts: readonly number[],
  nowMs: number,
  paceMs: number,
  spanMs: number,
): number {
  let at = nowMs;
  if (paceMs <= 0) return at;
  const tolerance = Math.max(paceMs / 4, PACE_RESOLUTION_MS);
  for (let j = 1; j <= starts.length; j++) {
    const s = starts[starts.length - j]!;
    if (s <= nowMs - spanMs) break;
    at = Math.max(at, s + j * paceMs - tolerance);
  }
  return at;
}

export interface SlotCheck {
  /** Recorded start times, ascending; at least those of the last minute (plus margin). */
  starts: readonly number[];
  /** Starts recorded in the UTC day of `nowMs`. */
  usedToday: number;
  nowMs: number;
  priority: Priority;
  limits: PlanLimits;
  windowReserve: number;
  /** Reserve of the 60 s window when it differs from `windowReserve` (liveReserve.ts). */
  minuteReserve?: number | undefined;
  dailyReserve: number;
  /** Widening of both windows, for clock skew and network jitter (see the module comment). */
  marginMs: number;
  /** The pace lower priorities keep (see paceEarliest); 0 = none. */
  paceMs: number;
  pausedUntil: number | null;
  /** A pause caused by the Service's daily cap (the requests are refused, not delayed). */
  pausedForDailyCap: boolean;
}

/** A ledger's state as a check decides on it: what it recorded, and any pause. */
export type LedgerState = Pick<SlotCheck, 'starts' | 'usedToday' | 'pausedUntil' | 'pausedForDailyCap'>;

/** The check of `request` against a ledger's state: the same for every ledger. */
export function slotCheckFor(request: SlotRequest, state: LedgerState): SlotCheck {
  return {
    ...state,
    nowMs: request.nowMs,
    priority: request.priority,
    limits: request.limits,
    windowReserve: request.windowReserve,
    minuteReserve: request.minuteReserve,
    dailyReserve: request.dailyReserve,
    marginMs: request.marginMs ?? 0,
    paceMs: request.paceMs ?? 0,
  };
}

export type SlotDecision =
  { allowed: true } | { allowed: false; retryAtMs: number; dailyCapReached: boolean };

/** Decides whether a request may start at `nowMs`; if not, the earliest time worth asking again. */
export function decideSlot(check: SlotCheck): SlotDecision {
  const { nowMs, limits, priority } = check;
  if (check.pausedUntil !== null && check.pausedUntil > nowMs) {
    return { allowed: false, retryAtMs: check.pausedUntil, dailyCapReached: check.pausedForDailyCap };
  }
  const daily = dailyAllowance(limits.dailyCap, check.dailyReserve, priority);
  if (daily !== null && check.usedToday >= daily) {
    return { allowed: false, retryAtMs: nextUtcMidnight(nowMs), dailyCapReached: true };
  }
  let at = Math.max(
    earliestInWindow(
      check.starts,
      nowMs,
      SECOND_MS + check.marginMs,
      windowAllowance(limits.burstPerSecond, check.windowReserve, priority),
    ),
    earliestInWindow(
      check.starts,
      nowMs,
      MINUTE_MS + check.marginMs,
      windowAllowance(limits.ratePerMinute, check.minuteReserve ?? check.windowReserve, priority),
    ),
  );
  if (priority !== 'live') {
    at = Math.max(at, paceEarliest(check.starts, nowMs, check.paceMs, MINUTE_MS + check.marginMs));
  }
  return at <= nowMs ? { allowed: true } : { allowed: false, retryAtMs: at, dailyCapReached: false };
}

export type SlotsDecision =
  { allowed: true; count: number } | { allowed: false; retryAtMs: number; dailyCapReached: boolean };

/**
 * How many of up to `wanted` requests may all start at `check.nowMs`: each is decided by
 * decideSlot as if the ones before it had started (recorded at `nowMs`, counted in the day). When
 * not even one may, the first one's answer says when to ask again.
 */
export function decideSlots(check: SlotCheck, wanted: number): SlotsDecision {
  const starts = [...check.starts];
  for (let granted = 0; granted < wanted; granted++) {
    const decision = decideSlot({ ...check, starts, usedToday: check.usedToday + granted });
    if (!decision.allowed) return granted > 0 ? { allowed: true, count: granted } : decision;
    insertAscending(starts, check.nowMs);
  }
  return { allowed: true, count: wanted };
}

/** Inserts `ms` into ascending `starts`, keeping it ascending (clocks of other hosts may lag). */
export function insertAscending(starts: number[], ms: number): void {
  let i = starts.length;
  while (i > 0 && starts[i - 1]! > ms) i--;
  starts.splice(i, 0, ms);
}

/**
 * The most requests the windows allow in a span of `spanMs` starting empty (no daily cap): greedy
 * earliest placement, which is optimal for "at most k in any span" limits. Benchmarks use it as
 * the 100 % mark for utilisation.
 */
export function maxStartsInSpan(limits: PlanLimits, spanMs: number): number {
  const starts: number[] = [];
  let t = 0;
  for (;;) {
    t = Math.max(
      earliestInWindow(starts, t, SECOND_MS, limits.burstPerSecond),
      earliestInWindow(starts, t, MINUTE_MS, limits.ratePerMinute),
    );
    if (t >= spanMs) return starts.length;
    starts.push(t);
  }
}
