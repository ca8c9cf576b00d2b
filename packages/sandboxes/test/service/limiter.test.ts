import { describe, expect, it } from 'vitest';
import type { PlanLimits } from '../../src/service/plans.js';
import { decide, SlidingWindowLimiter, type LimitDecision } from '../../src/service/limiter.js';
import { formatRetryAfter } from '../../src/service/retryAfter.js';
import { seededRandom } from '../../src/service/rng.js';
import { FakeClock } from '../../../../src/util/fakeClock.js';

const SALES: PlanLimits = { ratePerMinute: 60, burstPerSecond: 10, dailyCap: 10_000 };

/** Brute force: accepted requests in (t - span, t]. */
function inSpan(accepted: readonly number[], t: number, span: number): number {
  return accepted.filter((a) => a > t - span && a <= t).length;
}

describe('SlidingWindowLimiter', () => {
  it('never lets more than burst into any 1 s or rate into any 60 s, and refuses only when full', async () => {
    const clock = new FakeClock();
    const limiter = new SlidingWindowLimiter(SALES, clock);
    const random = seededRandom(7);
    const accepted: number[] = [];
    let rejected = 0;
    for (let i = 0; i < 3000; i++) {
      // Bursts of back-to-back requests with occasional pauses, like a greedy client.
      await clock.advance(random() < 0.8 ? Math.floor(random() * 40) : Math.floor(random() * 3000));
      const now = clock.now();
      const fullBefore = inSpan(accepted, now, 1000) >= 10 || inSpan(accepted, now, 60_000) >= 60;
      const decision = limiter.tryAcquire('k');
      expect(decision.allowed).toBe(!fullBefore);
      if (decision.allowed) accepted.push(now);
      else rejected++;
    }
    for (const t of accepted) {
      expect(inSpan(accepted, t, 1000)).toBeLessThanOrEqual(10);
      expect(inSpan(accepted, t, 60_000)).toBeLessThanOrEqual(60);
    }
    expect(rejected).toBeGreaterThan(100);
    expect(Math.max(...accepted.map((t) => inSpan(accepted, t, 60_000)))).toBe(60);
  });

  it('answers the exact instant a slot frees: refused 1 ms before, accepted at it', async () => {
    const clock = new FakeClock();
    const limiter = new SlidingWindowLimiter(SALES, clock);
    const random = seededRandom(11);
    let checked = 0;
    for (let i = 0; i < 400; i++) {
      await clock.advance(Math.floor(random() * 120));
      const decision = limiter.tryAcquire('k');
      if (decision.allowed || decision.reason !== 'rate') continue;
      const wait = decision.retryAtMs - clock.now();
      expect(wait).toBeGreaterThan(0);
      await clock.advance(wait - 1);
      expect(limiter.tryAcquire('k').allowed).toBe(false);
      await clock.advance(1);
      expect(limiter.tryAcquire('k').allowed).toBe(true);
      checked++;
    }
    expect(checked).toBeGreaterThan(20);
  });

  it('keeps the windows of each API key apart', () => {
    const clock = new FakeClock();
    const limiter = new SlidingWindowLimiter({ ratePerMinute: 60, burstPerSecond: 2, dailyCap: null }, clock);
    expect([1, 2, 3].map(() => limiter.tryAcquire('a').allowed)).toEqual([true, true, false]);
    expect(limiter.tryAcquire('b').allowed).toBe(true);
  });

  it('computes the retry time from both windows', () => {
    const limits: PlanLimits = { ratePerMinute: 3, burstPerSecond: 2, dailyCap: null };
    // Minute window full: the oldest of the last 3 leaves at 1000 + 60 000.
    const usage = { times: [1000, 30_000, 59_500], dayStartMs: 0, usedToday: 3 };
    expect(decide(usage, limits, 59_600)).toEqual({ allowed: false, reason: 'rate', retryAtMs: 61_000 });
    // Second window full too: the later of the two frees it.
    const both = { times: [59_000, 59_400, 59_500], dayStartMs: 0, usedToday: 3 };
    expect(decide(both, limits, 59_600)).toEqual({ allowed: false, reason: 'rate', retryAtMs: 119_000 });
    expect(decide({ times: [], dayStartMs: 0, usedToday: 0 }, limits, 10)).toEqual({ allowed: true });
  });

  it('enforces the daily cap per UTC day and resets at midnight', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 23, 59, 0));
    const limiter = new SlidingWindowLimiter({ ratePerMinute: 100, burstPerSecond: 100, dailyCap: 3 }, clock);
    const decisions: LimitDecision[] = [];
    for (let i = 0; i < 4; i++) decisions.push(limiter.tryAcquire('k'));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(decisions[3]).toEqual({ allowed: false, reason: 'daily', retryAtMs: Date.UTC(2026, 0, 2) });
    expect(limiter.usedToday('k')).toBe(3);
    await clock.advance(59_999);
    expect(limiter.tryAcquire('k').allowed).toBe(false);
    await clock.advance(1);
    expect(limiter.tryAcquire('k').allowed).toBe(true);
    expect(limiter.usedToday('k')).toBe(1);
  });

  it('treats a null daily cap as unlimited', () => {
    const clock = new FakeClock();
    const limiter = new SlidingWindowLimiter(
      { ratePerMinute: 1e6, burstPerSecond: 1e6, dailyCap: null },
      clock,
    );
    for (let i = 0; i < 5000; i++) expect(limiter.tryAcquire('k').allowed).toBe(true);
  });
});

describe('formatRetryAfter', () => {
  const now = Date.UTC(2026, 0, 1, 12, 0, 0, 250);
  it('rounds whole seconds up', () => {
    expect(formatRetryAfter(now + 1, now, 'seconds')).toBe('1');
    expect(formatRetryAfter(now + 1000, now, 'seconds')).toBe('1');
    expect(formatRetryAfter(now + 1001, now, 'seconds')).toBe('2');
    expect(formatRetryAfter(now + 59_750, now, 'seconds')).toBe('60');
  });
  it('writes fractional seconds and HTTP-dates (rounded up to the second)', () => {
    expect(formatRetryAfter(now + 250, now, 'fractional')).toBe('0.250');
    expect(formatRetryAfter(now + 1500, now, 'http-date')).toBe('Thu, 01 Jan 2026 12:00:02 GMT');
    expect(formatRetryAfter(now + 1750, now, 'http-date')).toBe('Thu, 01 Jan 2026 12:00:02 GMT');
    expect(formatRetryAfter(now + 1500, now, 'none')).toBeUndefined();
  });
});
