import { describe, expect, it } from 'vitest';
import { LiveReserve } from '../../src/budget/liveReserve.js';
import { DAY_MS } from '../../src/budget/window.js';

const T = Date.UTC(2026, 0, 8, 9, 0, 0); // a Thursday, 09:00 UTC
const MIN = 60_000;

/** `count` arrivals spread over `spreadMs` from `at`. */
function burst(reserve: LiveReserve, at: number, count: number, spreadMs = 10_000): void {
  for (let i = 0; i < count; i++) reserve.record(at + Math.floor((i * spreadMs) / count));
}

describe('live reserve', () => {
  it('stays at the floor with no history', () => {
    const r = new LiveReserve();
    expect(r.expected(T)).toBe(0);
    expect(r.minuteReserve(T, 60, 1)).toBe(1);
    expect(r.minuteReserve(T, 60, 0)).toBe(0);
  });

  it("keeps room ahead of yesterday's burst, from the lookahead before it until it has passed", () => {
    const r = new LiveReserve({ lookaheadMs: 90_000 });
    burst(r, T - DAY_MS, 30);
    expect(r.minuteReserve(T - 2 * MIN, 60, 1)).toBe(1);
    expect(r.minuteReserve(T - 80_000, 60, 1)).toBe(30);
    expect(r.minuteReserve(T, 60, 1)).toBe(30);
    // Arrivals are counted per 10 s: the whole burst stays ahead until its bucket has passed.
    expect(r.minuteReserve(T + 9_999, 60, 1)).toBe(30);
    expect(r.minuteReserve(T + 10_000, 60, 1)).toBe(1);
  });

  it('trusts older days less, and takes the busiest weighted day', () => {
    const r = new LiveReserve({ decay: 0.5 });
    burst(r, T - 3 * DAY_MS, 40);
    expect(r.expected(T)).toBe(10); // 40 x 0.5^2
    burst(r, T - DAY_MS, 12);
    expect(r.expected(T)).toBe(12);
  });

  it('learns the hour and half hour of a busy day from the last half hours', () => {
    const r = new LiveReserve();
    // Bursts at 08:00 and 08:30 today, none on earlier days.
    burst(r, T - 2 * 30 * MIN, 20);
    burst(r, T - 30 * MIN, 25);
    expect(r.minuteReserve(T - 30_000, 60, 1)).toBe(25);
    // Nothing ahead at a quarter past.
    expect(r.minuteReserve(T + 15 * MIN, 60, 1)).toBe(1);
  });

  it('never reserves the whole window: lower priorities keep one slot', () => {
    const r = new LiveReserve();
    burst(r, T - DAY_MS, 500);
    expect(r.minuteReserve(T, 60, 1)).toBe(59);
    expect(r.minuteReserve(T, 1, 1)).toBe(0);
  });

  it('looks back only the days it is given', () => {
    const r = new LiveReserve({ days: 2 });
    burst(r, T - 3 * DAY_MS, 30);
    r.record(T);
    expect(r.expected(T)).toBe(0);
    expect(r.expected(T + DAY_MS)).toBe(1);
  });

  it('refuses a decay outside (0, 1]', () => {
    expect(() => new LiveReserve({ decay: 0 })).toThrow(/decay/);
    expect(() => new LiveReserve({ decay: 1.5 })).toThrow(/decay/);
  });
});
