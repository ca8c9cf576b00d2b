import { describe, expect, it } from 'vitest';
import {
  backfillShare,
  DEFAULT_REQUESTS_PER_CALL,
  MIN_CALLS_TO_MEASURE,
  projectFinish,
  requestsPerCall,
} from '../../src/budget/forecast.js';
import { PLAN_PRESETS } from '../../src/budget/plans.js';

const MIN = 60_000;
const reserves = { liveWindowReserve: 1, liveDailyReserve: 0.1 };

describe('backfill share of a plan', () => {
  it('is the windows less the live slot and the cap less the live share', () => {
    // sales: 60/min, 10/s, 10,000/day -> 59/min (one slot kept for live), 9,000/day.
    expect(backfillShare(PLAN_PRESETS.sales, reserves)).toEqual({ perMinute: 59, perDay: 9000 });
    expect(backfillShare(PLAN_PRESETS.team, reserves)).toEqual({ perMinute: 119, perDay: 45_000 });
  });
  it('is held to the pace when the burst limit is the slower one, and unlimited without a cap', () => {
    // 1 000 ms / 2 per second = one every 500 ms = 120/min, slower than the 600/min rate.
    expect(backfillShare({ ratePerMinute: 600, burstPerSecond: 2, dailyCap: null }, reserves)).toEqual({
      perMinute: 120,
      perDay: null,
    });
  });
});

describe('when a backfill finishes', () => {
  const share = { perMinute: 60, perDay: 9000 };
  const noon = Date.UTC(2026, 2, 2, 12);
  const midnight = Date.UTC(2026, 2, 3);

  it('at the rate when the day has room', () => {
    expect(projectFinish({ requests: 600, nowMs: noon, usedToday: 0, share }).getTime()).toBe(
      noon + 10 * MIN,
    );
  });
  it('waits for midnight once the day share is spent, and spans days', () => {
    // 1 000 left today; 9 000 tomorrow; the last 500 on the third day from its midnight.
    const at = projectFinish({ requests: 10_500, nowMs: noon, usedToday: 8000, share });
    expect(at.getTime()).toBe(midnight + 86_400_000 + (500 / 60) * MIN);
  });
  it('is bound by the rate late in the day', () => {
    // 10 minutes to midnight: 600 today at 60/min, the other 60 in the first minute after.
    const late = midnight - 10 * MIN;
    expect(projectFinish({ requests: 660, nowMs: late, usedToday: 0, share }).getTime()).toBe(midnight + MIN);
  });
  it('is now for nothing to do, and never waits for a day without a cap', () => {
    expect(projectFinish({ requests: 0, nowMs: noon, usedToday: 0, share }).getTime()).toBe(noon);
    const unlimited = { perMinute: 60, perDay: null };
    expect(
      projectFinish({ requests: 86_400, nowMs: noon, usedToday: 50_000, share: unlimited }).getTime(),
    ).toBe(noon + 86_400 * 1000);
  });
});

describe('requests per call', () => {
  it('is measured from enough history, else the per-pipeline default', () => {
    expect(requestsPerCall({ requests: 300, calls: 100 })).toEqual({
      value: 3,
      source: 'measured',
      requests: 300,
      calls: 100,
    });
    expect(requestsPerCall({ requests: 300, calls: MIN_CALLS_TO_MEASURE - 1 })).toEqual({
      value: DEFAULT_REQUESTS_PER_CALL,
      source: 'default',
    });
    expect(requestsPerCall(null).value).toBeCloseTo(2.01);
  });
});
