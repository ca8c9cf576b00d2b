/**
 * Budget forecasts, free of I/O: when the daily cap runs out at the current pace, how many
 * Service requests a number of calls needs, and when work at the lowest priority would finish at
 * the plan's rate and daily cap. The backfill gets what the gate (budget.ts) lets it have: the
 * windows less the live window reserve, paced (window.ts paceFor), and the daily cap less the
 * live daily reserve, which is left untouched.
 */
import type { PlanLimits } from './plans.js';
import {
  dailyAllowance,
  dailyLiveReserve,
  MINUTE_MS,
  nextUtcMidnight,
  paceFor,
  windowAllowance,
} from './window.js';

/** When the daily cap runs out at the pace of the last minute. */
export type CapProjection =
  | { kind: 'unlimited' }
  | { kind: 'reached' }
  | { kind: 'idle' }
  | { kind: 'lasts_today' }
  | { kind: 'runs_out'; at: Date };

export function projectDailyCap(input: {
  usedToday: number;
  dailyCap: number | null;
  inLastMinute: number;
  nowMs: number;
}): CapProjection {
  if (input.dailyCap === null) return { kind: 'unlimited' };
  const left = input.dailyCap - input.usedToday;
  if (left <= 0) return { kind: 'reached' };
  if (input.inLastMinute <= 0) return { kind: 'idle' };
  const at = input.nowMs + (left / input.inLastMinute) * MINUTE_MS;
  // The cap is per UTC day: it resets at the next midnight.
  return at >= nextUtcMidnight(input.nowMs)
    ? { kind: 'lasts_today' }
    : { kind: 'runs_out', at: new Date(at) };
}

/**
 * Service requests one call costs a backfill when no history says better, by the pipeline
 * (src/pipelines/writeback.ts): its share of a list page of 100 (the walk), the analysis, and the
 * follow-up drafts. A listed call that is already analysed is not read again.
 */
export const DEFAULT_REQUESTS_PER_CALL_PARTS = { listShare: 1 / 100, analysis: 1, followups: 1 } as const;
export const DEFAULT_REQUESTS_PER_CALL = Object.values(DEFAULT_REQUESTS_PER_CALL_PARTS).reduce(
  (a, b) => a + b,
  0,
);

/** Fewer calls than this in the history: too few to measure, the default is used. */
export const MIN_CALLS_TO_MEASURE = 20;

export interface RequestsPerCall {
  value: number;
  source: 'measured' | 'default';
  /** For 'measured': the requests and calls it was measured over. */
  requests?: number;
  calls?: number;
}

/** Requests per call from the worker's history (requests spent, calls finished), else the default. */
export function requestsPerCall(history: { requests: number; calls: number } | null): RequestsPerCall {
  if (!history || history.calls < MIN_CALLS_TO_MEASURE || history.requests <= 0) {
    return { value: DEFAULT_REQUESTS_PER_CALL, source: 'default' };
  }
  return { value: history.requests / history.calls, source: 'measured', ...history };
}

/** The pace and daily share the gate gives the lowest priority. */
export interface BackfillShare {
  /** Requests per minute (null never: the plan always has a rate). */
  perMinute: number;
  /** Requests per UTC day; null = unlimited. */
  perDay: number | null;
}

export function backfillShare(
  limits: PlanLimits,
  reserves: { liveWindowReserve: number; liveDailyReserve: number },
): BackfillShare {
  const dailyReserve = dailyLiveReserve(limits.dailyCap, reserves.liveDailyReserve);
  return {
    perMinute: Math.min(
      windowAllowance(limits.ratePerMinute, reserves.liveWindowReserve, 'backfill'),
      MINUTE_MS / paceFor(limits),
    ),
    perDay: dailyAllowance(limits.dailyCap, dailyReserve, 'backfill'),
  };
}

/**
 * When `requests` would be done, starting at `nowMs` with `usedToday` of the day already spent,
 * at `share.perMinute` until each day's share is gone, then from the next UTC midnight.
 */
export function projectFinish(input: {
  requests: number;
  nowMs: number;
  usedToday: number;
  share: BackfillShare;
}): Date {
  const { perMinute, perDay } = input.share;
  let left = Math.max(0, input.requests);
  let t = input.nowMs;
  let dayLeft = perDay === null ? Infinity : Math.max(0, perDay - input.usedToday);
  for (;;) {
    const midnight = nextUtcMidnight(t);
    const today = Math.min(dayLeft, (perMinute * (midnight - t)) / MINUTE_MS);
    if (left <= today) return new Date(t + (left / perMinute) * MINUTE_MS);
    left -= today;
    t = midnight;
    dayLeft = perDay ?? Infinity;
  }
}
