/**
 * The budget forecast in the status snapshot and the metrics: jobs due at backfill priority,
 * the requests they need and when they finish at the plan's backfill share, over a real database.
 */
import { describe, expect, it } from 'vitest';
import { InMemorySlotLedger } from '../../src/budget/ledger.js';
import type { PlanLimits } from '../../src/budget/plans.js';
import { formatStatus } from '../../src/cli/statusFormat.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { enqueueJob, JOB_PRIORITY } from '../../src/store/jobQueue.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { collectForecast, collectStatus, forecastTimes } from '../../src/ops/status.js';
import { useMigratedDatabase } from '../store/helpers.js';

const LIMITS: PlanLimits = { ratePerMinute: 60, burstPerSecond: 10, dailyCap: 1000 };
const RESERVES = { liveWindowReserve: 1, liveDailyReserve: 0.1 };
const NOW = Date.UTC(2026, 1, 10, 22);

describe('budget forecast in the status', () => {
  const current = useMigratedDatabase('embedded');

  it('gives the backfill ETA of the due backlog and when the cap runs out at the current pace', async () => {
    const db = current().db.prisma;
    const clock = new FakeClock(NOW);
    const ledger = new InMemorySlotLedger();
    // 30 requests in the last minute, 700 today before that: 270 left at 30/min = 9 minutes.
    for (let i = 0; i < 700; i++) {
      await ledger.acquire({
        nowMs: NOW - 3_600_000,
        priority: 'live',
        limits: { ...LIMITS, ratePerMinute: 1e6, burstPerSecond: 1e6 },
        windowReserve: 0,
        dailyReserve: 0,
      });
    }
    for (let i = 0; i < 30; i++) {
      await ledger.acquire({
        nowMs: NOW - 59_000 + i * 1000,
        priority: 'live',
        limits: LIMITS,
        windowReserve: 0,
        dailyReserve: 0,
      });
    }
    // 300 calls due at backfill priority, one not due yet, one at write-back priority.
    for (let i = 0; i < 300; i++) {
      await enqueueJob(db, {
        kind: 'writeback',
        key: `writeback:b${i}`,
        priority: JOB_PRIORITY.backfill,
        now: new Date(NOW - 1000),
      });
    }
    await enqueueJob(db, {
      kind: 'writeback',
      key: 'writeback:later',
      priority: JOB_PRIORITY.backfill,
      runAt: new Date(NOW + 60_000),
      now: new Date(NOW),
    });
    await enqueueJob(db, {
      kind: 'writeback',
      key: 'writeback:w',
      priority: JOB_PRIORITY.writeback,
      now: new Date(NOW),
    });

    const deps = { db, crm: 'hubspot' as const, clock, limits: LIMITS, ledger, reserves: RESERVES };
    const status = await collectStatus(deps);
    expect(status.forecast.dailyCap).toEqual({
      kind: 'runs_out',
      at: new Date(NOW + 9 * 60_000).toISOString(),
    });
    // 300 calls x 2.01 = 603 requests. Backfill share: 59/min, 1000 - 100 (live) = 900/day, of
    // which 730 are used: 170 before midnight (2 h away, the rate is not what binds), 433 after.
    const requests = 603;
    const finishes = Date.UTC(2026, 1, 11) + ((requests - 170) / 59) * 60_000;
    expect(status.forecast.backfill).toEqual({
      queuedCalls: 300,
      requestsPerCall: { value: 2.01, source: 'default' },
      requests,
      finishesAt: new Date(finishes).toISOString(),
    });
    expect(await collectForecast(deps)).toEqual(status.forecast);

    const text = formatStatus(status);
    expect(text).toContain(
      `Forecast: the daily cap runs out at ${new Date(NOW + 9 * 60_000).toISOString()} at the current pace`,
    );
    // The one not due yet is said too, so the line agrees with the queue's "301 backfill waiting".
    expect(text).toContain('301 backfill waiting');
    expect(text).toContain(
      `Backfill: 300 call(s) queued, about 603 requests (2.01 per call, default); ETA ${new Date(finishes).toISOString()}; 1 call(s) waiting for a later time (not yet analysed, or backing off)`,
    );
    // None due: not "nothing queued" beside the waiting ones.
    const none = { ...status, forecast: { ...status.forecast, backfill: null } };
    expect(formatStatus(none)).toContain(
      'Backfill: none due now; 301 call(s) waiting for a later time (not yet analysed, or backing off)',
    );

    const metrics = createMetrics({ defaultMetrics: false });
    metrics.setForecastSource(async () => forecastTimes(await collectForecast(deps), clock.now()));
    const rendered = await metrics.render();
    expect(rendered).toContain(`crmsync_budget_cap_exhausted_timestamp_seconds ${(NOW + 9 * 60_000) / 1000}`);
    expect(rendered).toContain(`crmsync_backfill_eta_timestamp_seconds ${Math.trunc(finishes) / 1000}`);
  });

  it('measures requests per call from the last 7 days once 20 calls finished in them', async () => {
    const db = current().db.prisma;
    const now = Date.UTC(2026, 1, 20, 12);
    const clock = new FakeClock(now);
    const day = (d: number) => new Date(Date.UTC(2026, 1, 20 - d));
    // 7 days of ledger (today included) and one older day that does not count.
    for (const [d, used] of [
      [0, 100],
      [3, 200],
      [6, 60],
      [7, 5000],
    ] as const) {
      await db.budgetLedger.create({ data: { ledger: 'service', day: day(d), used } });
    }
    const finished = (i: number, state: string, at: Date) =>
      db.syncStatus.create({
        data: { callId: `m${i}`, crm: 'hubspot', state, createdAt: at, updatedAt: at },
      });
    for (let i = 0; i < 24; i++)
      await finished(i, i % 3 === 0 ? 'skipped' : 'written_back', new Date(now - (i + 1) * 3_600_000));
    await finished(100, 'written_back', new Date(now - 8 * 86_400_000)); // too old
    await finished(101, 'awaiting_analysis', new Date(now - 3_600_000)); // not finished
    await enqueueJob(db, {
      kind: 'writeback',
      key: 'writeback:mm',
      priority: JOB_PRIORITY.backfill,
      now: new Date(now - 1),
    });

    const status = await collectStatus({
      db,
      crm: 'hubspot',
      clock,
      limits: LIMITS,
      ledger: new InMemorySlotLedger(),
      reserves: RESERVES,
    });
    // (100 + 200 + 60) requests / 24 calls = 15 per call.
    expect(status.forecast.backfill?.requestsPerCall).toEqual({
      value: 15,
      source: 'measured',
      requests: 360,
      calls: 24,
    });
    expect(status.forecast.backfill?.requests).toBe(15 * status.forecast.backfill!.queuedCalls);
  });
});
