import { describe, expect, it } from 'vitest';
import type { PlanLimits } from '../../src/budget/plans.js';
import {
  countInWindow,
  dailyAllowance,
  decideSlot,
  decideSlots,
  earliestInWindow,
  maxStartsInSpan,
  nextUtcMidnight,
  paceEarliest,
  paceFor,
  utcDayStart,
  windowAllowance,
  type SlotCheck,
} from '../../src/budget/window.js';

const limits: PlanLimits = { ratePerMinute: 6, burstPerSecond: 2, dailyCap: 100 };

function check(overrides: Partial<SlotCheck>): SlotCheck {
  return {
    starts: [],
    usedToday: 0,
    nowMs: 100_000,
    priority: 'backfill',
    limits,
    windowReserve: 0,
    dailyReserve: 0,
    marginMs: 0,
    paceMs: 0,
    pausedUntil: null,
    pausedForDailyCap: false,
    ...overrides,
  };
}

describe('window arithmetic', () => {
  it('treats s and s + 1000 as different 1 s spans, s + 999 as the same', () => {
    // The Service counts (t - 1000, t]: a start at s is out of the span at t = s + 1000.
    expect(countInWindow([5000], 6000, 1000)).toBe(0);
    expect(countInWindow([5000], 5999, 1000)).toBe(1);
    expect(earliestInWindow([5000], 5500, 1000, 1)).toBe(6000);
    expect(earliestInWindow([5000], 6000, 1000, 1)).toBe(6000);
  });

  it('is set by the allowed-th most recent start', () => {
    const starts = [1000, 1200, 1400, 1600];
    expect(earliestInWindow(starts, 1700, 1000, 5)).toBe(1700);
    expect(earliestInWindow(starts, 1700, 1000, 4)).toBe(2000);
    expect(earliestInWindow(starts, 1700, 1000, 2)).toBe(2400);
    expect(earliestInWindow(starts, 1700, 1000, 0)).toBe(Infinity);
  });

  it('ignores future starts when counting', () => {
    expect(countInWindow([1000, 3000], 2000, 1000)).toBe(0);
    expect(countInWindow([1500, 3000], 2000, 1000)).toBe(1);
  });

  it('the margin pushes the next start past s + 1000 + margin', () => {
    const d = decideSlot(check({ starts: [99_000, 99_500], nowMs: 100_000, marginMs: 5 }));
    expect(d).toEqual({ allowed: false, retryAtMs: 100_005, dailyCapReached: false });
    expect(decideSlot(check({ starts: [99_000, 99_500], nowMs: 100_005, marginMs: 5 }))).toEqual({
      allowed: true,
    });
    expect(decideSlot(check({ starts: [99_000, 99_500], nowMs: 100_000, marginMs: 0 }))).toEqual({
      allowed: true,
    });
  });

  it('applies the minute window with the burst window', () => {
    const starts = [41_000, 42_000, 43_000, 44_000, 45_000, 46_000];
    expect(decideSlot(check({ starts, nowMs: 100_000 }))).toEqual({
      allowed: false,
      retryAtMs: 101_000,
      dailyCapReached: false,
    });
    expect(decideSlot(check({ starts, nowMs: 101_000 }))).toEqual({ allowed: true });
  });

  it('keeps reserved slots for live only, and always leaves lower priorities one', () => {
    expect(windowAllowance(20, 1, 'live')).toBe(20);
    expect(windowAllowance(20, 1, 'backfill')).toBe(19);
    expect(windowAllowance(20, 2, 'writeback')).toBe(18);
    expect(windowAllowance(1, 1, 'backfill')).toBe(1);
    expect(windowAllowance(3, 9, 'backfill')).toBe(1);
    const starts = [99_900];
    expect(decideSlot(check({ starts, windowReserve: 1 }))).toEqual({
      allowed: false,
      retryAtMs: 100_900,
      dailyCapReached: false,
    });
    expect(decideSlot(check({ starts, windowReserve: 1, priority: 'live' }))).toEqual({ allowed: true });
  });

  it('keeps the daily reserve for live and resets at UTC midnight', () => {
    const now = Date.UTC(2026, 2, 3, 23, 59, 59, 500);
    expect(utcDayStart(now)).toBe(Date.UTC(2026, 2, 3));
    expect(nextUtcMidnight(now)).toBe(Date.UTC(2026, 2, 4));
    expect(dailyAllowance(100, 10, 'backfill')).toBe(90);
    expect(dailyAllowance(100, 10, 'live')).toBe(100);
    expect(dailyAllowance(null, 10, 'backfill')).toBeNull();
    expect(decideSlot(check({ nowMs: now, usedToday: 90, dailyReserve: 10 }))).toEqual({
      allowed: false,
      retryAtMs: Date.UTC(2026, 2, 4),
      dailyCapReached: true,
    });
    expect(decideSlot(check({ nowMs: now, usedToday: 90, dailyReserve: 10, priority: 'live' }))).toEqual({
      allowed: true,
    });
    expect(decideSlot(check({ nowMs: now, usedToday: 100, priority: 'live' }))).toMatchObject({
      allowed: false,
      dailyCapReached: true,
    });
  });

  it('holds everything during a pause; a daily pause counts as the cap reached', () => {
    expect(decideSlot(check({ priority: 'live', pausedUntil: 100_500 }))).toEqual({
      allowed: false,
      retryAtMs: 100_500,
      dailyCapReached: false,
    });
    expect(decideSlot(check({ pausedUntil: 100_500, pausedForDailyCap: true }))).toMatchObject({
      dailyCapReached: true,
    });
    expect(decideSlot(check({ pausedUntil: 100_000 }))).toEqual({ allowed: true });
  });

  it('paces lower priorities over all recent starts, not live', () => {
    expect(paceFor({ ratePerMinute: 120, burstPerSecond: 20, dailyCap: null })).toBe(500);
    expect(paceFor({ ratePerMinute: 6000, burstPerSecond: 50, dailyCap: null })).toBe(20);
    // j-th most recent start at least j paces back, less a quarter pace.
    expect(paceEarliest([99_800], 100_000, 500, 60_000)).toBe(100_175);
    expect(paceEarliest([0, 500, 1000, 1200], 1200, 500, 60_000)).toBe(1875);
    // Late starts catch up on the grid of the oldest start instead of drifting.
    expect(paceEarliest([0, 502, 1004, 1506, 2008], 2008, 500, 60_000)).toBe(2383);
    // Starts that left the span do not count.
    expect(paceEarliest([0, 500, 1000], 70_000, 500, 60_000)).toBe(70_000);
    expect(paceEarliest([1000], 1000, 0, 60_000)).toBe(1000);
    const starts = [99_800];
    expect(decideSlot(check({ starts, paceMs: 500 }))).toEqual({
      allowed: false,
      retryAtMs: 100_175,
      dailyCapReached: false,
    });
    expect(decideSlot(check({ starts, paceMs: 500, priority: 'live' }))).toEqual({ allowed: true });
  });

  it('computes the most the windows allow in a span', () => {
    const team = { ratePerMinute: 120, burstPerSecond: 20, dailyCap: null };
    expect(maxStartsInSpan(team, 60_000)).toBe(120);
    expect(maxStartsInSpan(team, 3_000)).toBe(60);
    expect(maxStartsInSpan(team, 90_000)).toBe(240);
    expect(maxStartsInSpan(team, 120_000)).toBe(240);
    expect(maxStartsInSpan(team, 120_001)).toBe(260);
    expect(maxStartsInSpan({ ratePerMinute: 600, burstPerSecond: 50, dailyCap: null }, 60_000)).toBe(600);
    expect(maxStartsInSpan({ ratePerMinute: 600, burstPerSecond: 5, dailyCap: null }, 60_000)).toBe(300);
  });

  it('grants a batch at one instant as if its slots were taken one by one', () => {
    // Burst 2, minute 6: two of five at once; then none, with the first refusal's retry time.
    expect(decideSlots(check({}), 5)).toEqual({ allowed: true, count: 2 });
    expect(decideSlots(check({ starts: [99_500] }), 5)).toEqual({ allowed: true, count: 1 });
    expect(decideSlots(check({ starts: [99_500, 99_900] }), 5)).toEqual({
      allowed: false,
      retryAtMs: 100_500,
      dailyCapReached: false,
    });
    // The day's share counts the batch's own slots.
    expect(decideSlots(check({ usedToday: 99 }), 2)).toEqual({ allowed: true, count: 1 });
    // Live's reserve is not taken by a batch of others.
    expect(decideSlots(check({ windowReserve: 1 }), 2)).toEqual({ allowed: true, count: 1 });
    // A pace of several ms allows one at a time, as before.
    expect(decideSlots(check({ paceMs: 20, limits: { ...limits, burstPerSecond: 50 } }), 5)).toEqual({
      allowed: true,
      count: 1,
    });
  });

  it('keeps a sub-millisecond pace per millisecond: about 1 / pace starts share one', () => {
    const roomy = { ratePerMinute: 1_000_000, burstPerSecond: 100_000, dailyCap: null };
    // Pace 0.06 ms: with j starts in this millisecond the next is due j * 0.06 - 1 ms later, so 17 fit.
    expect(decideSlots(check({ limits: roomy, paceMs: 0.06 }), 40)).toEqual({ allowed: true, count: 17 });
    expect(paceEarliest([100_000], 100_000, 0.06, 60_000)).toBe(100_000);
    // Seventeen in this millisecond already: the next one waits (a fraction of a millisecond).
    const full = Array.from({ length: 17 }, () => 100_000);
    expect(paceEarliest(full, 100_000, 0.06, 60_000)).toBeGreaterThan(100_000);
  });
});
