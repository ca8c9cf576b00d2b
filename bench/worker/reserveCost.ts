/**
 * What the learned live reserve (src/budget/liveReserve.ts) costs a backfill, measured on the real
 * request budget with a simulated clock: hours of a saturating backfill on the `sales` plan take
 * a second instead of hours, and the figure is exact rather than the ±1 request per minute a
 * wall-clock run can resolve. Utilisation is starts over the most the windows allow in the span
 * (window.ts maxStartsInSpan), as in `npm run bench:budget`.
 */
import { createRequestBudget } from '../../src/budget/budget.js';
import { BudgetClosedError } from '../../src/budget/errors.js';
import { LiveReserve } from '../../src/budget/liveReserve.js';
import type { PlanLimits } from '../../src/budget/plans.js';
import { DAY_MS, maxStartsInSpan } from '../../src/budget/window.js';
import { newClock } from '../../test/budget/helpers.js';

export interface ReserveCost {
  hours: number;
  /** Backfill starts over the most the plan allows in the span, 0..1. */
  utilisation: number;
  /** Waits of today's live requests for a slot, ms (empty when none came). */
  liveWaitsMs: number[];
}

export interface ReserveScenario {
  limits: PlanLimits;
  hours: number;
  /** Live requests per burst at every :00 and :30 of yesterday (0 = a quiet history). */
  yesterdayBurst: number;
  /** Live requests per burst at every :00 and :30 today, over 10 s (0 = none come). */
  todayBurst: number;
  /** The fixed reserve (SERVICE_LIVE_WINDOW_RESERVE), the learned one's floor; default 1. */
  floor?: number;
}

const HALF_HOUR_MS = 30 * 60_000;
/** Backfill requests kept waiting, so the budget is always saturated. */
const BACKFILL_DEPTH = 24;

export async function simulateReserve(scenario: ReserveScenario): Promise<ReserveCost> {
  // 08:50 UTC: the span covers 09:00, 09:30, ... each with its burst (or not).
  const start = Date.UTC(2026, 0, 8, 8, 50, 0);
  // Only the windows matter here; a daily cap would end a long run early (sales: 10,000 a day).
  const limits: PlanLimits = { ...scenario.limits, dailyCap: null };
  const clock = newClock(start);
  const spanMs = scenario.hours * 3_600_000;
  const reserve = new LiveReserve();
  const marks: number[] = [];
  for (let t = start + 10 * 60_000; t < start + spanMs; t += HALF_HOUR_MS) marks.push(t);
  for (const mark of marks) {
    for (let i = 0; i < scenario.yesterdayBurst; i++) {
      reserve.record(mark - DAY_MS + Math.floor((i * 10_000) / scenario.yesterdayBurst));
    }
  }
  const budget = createRequestBudget({
    limits,
    clock,
    liveWindowReserve: scenario.floor ?? 1,
    liveReserve: reserve,
    safetyMarginMs: 0,
  });
  let backfill = 0;
  let stopping = false;
  const loops = Array.from({ length: BACKFILL_DEPTH }, async () => {
    while (!stopping) {
      await budget
        .run('backfill', async () => {
          if (clock.now() < start + spanMs) backfill++;
        })
        .catch((error: unknown) => {
          if (!(error instanceof BudgetClosedError)) throw error;
        });
    }
  });
  const liveWaitsMs: number[] = [];
  const lives: Promise<void>[] = [];
  let next = start;
  for (const mark of scenario.todayBurst > 0 ? marks : []) {
    await clock.runFor(mark - next);
    for (let i = 0; i < scenario.todayBurst; i++) {
      const asked = clock.now();
      lives.push(budget.run('live', async () => void liveWaitsMs.push(clock.now() - asked)));
      const gap = Math.floor(10_000 / scenario.todayBurst);
      await clock.runFor(gap);
    }
    next = clock.now();
  }
  await clock.runFor(start + spanMs - clock.now());
  stopping = true;
  await budget.close();
  await Promise.all([...loops, ...lives.map((l) => l.catch(() => undefined))]);
  const live = liveWaitsMs.length;
  return {
    hours: scenario.hours,
    utilisation: (backfill + live) / maxStartsInSpan(limits, spanMs),
    liveWaitsMs,
  };
}
