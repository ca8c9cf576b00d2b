/**
 * `backfill --plan` against the Service sandbox seeded with a known number of calls: the count
 * goes through the real client, budget gate and database ledger; the printed finish time is
 * checked against the plan arithmetic written out by hand here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequestBudget } from '../../src/budget/index.js';
import type { PlanLimits } from '../../src/budget/plans.js';
import { formatBackfillPlan, inWords, planBackfill } from '../../src/cli/backfillPlan.js';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import { createServiceClient } from '../../src/service/client.js';
import { createDbSlotLedger } from '../../src/store/dbSlotLedger.js';
import { systemClock, type Clock } from '../../src/util/clock.js';
import { createMigratedDatabase, useMigratedDatabase } from '../store/helpers.js';
import { CONFIG_DIR, crmSync } from './helpers.js';

const CALLS = 1000;
/** 600/min and 50/s: the gate paces backfill at 100 ms a request, so the 10 list pages take ~1 s. */
const LIMITS: PlanLimits = { ratePerMinute: 600, burstPerSecond: 50, dailyCap: 2000 };
const RESERVES = { liveWindowReserve: 1, liveDailyReserve: 0.1 };
const MIDNIGHT = Date.UTC(2026, 2, 3);

/** Real time, shifted to an hour before MIDNIGHT: the budget's waits are real, the date is fixed. */
const offset = MIDNIGHT - 3_600_000 - Date.now();
const clock: Clock = { ...systemClock, now: () => Date.now() + offset };

describe('backfill --plan', () => {
  const current = useMigratedDatabase('embedded');
  let sandbox: ServiceSandbox;

  beforeAll(async () => {
    sandbox = await startServiceSandbox({ limits: LIMITS, clock, seedCalls: CALLS });
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('counts the seeded calls and prints the finish time of the plan arithmetic', async () => {
    const db = current().db.prisma;
    const ledger = createDbSlotLedger({ db });
    const budget = createRequestBudget({ limits: LIMITS, clock, ledger, ...RESERVES });
    const service = createServiceClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey, budget, clock });
    try {
      const plan = await planBackfill(
        { db, crm: 'hubspot', service, clock, ledger, limits: LIMITS, reserves: RESERVES },
        { sinceMs: Date.UTC(2000, 0, 1), untilMs: clock.now() },
      );
      expect(plan.calls).toBe(CALLS);
      expect(plan.listRequests).toBeGreaterThanOrEqual(CALLS / 100);
      expect(plan.listRequests).toBeLessThanOrEqual(CALLS / 100 + 1);
      // The count's list requests are the only ones today, paid through the shared ledger (plus
      // any slot a request started too late for and did not use: a slow first ledger answer).
      expect(plan.usedToday).toBe(plan.listRequests + budget.stats().lapsedSlots);
      expect(sandbox.state.counters.requests).toBe(plan.listRequests);
      expect(plan.perCall.source).toBe('default');

      // No history: 2.01 requests a call (list share + analysis + follow-ups).
      const requests = Math.ceil(CALLS * 2.01);
      expect(plan.requests).toBe(requests);
      // Backfill share: 600/min less one live slot = 599/min; 2 000/day less the 10 % live
      // reserve = 1 800/day, of which the count used some. The rest waits for midnight.
      const perMinute = 599;
      const leftToday = 1800 - plan.usedToday;
      const expected = new Date(MIDNIGHT + ((requests - leftToday) / perMinute) * 60_000);
      expect(plan.finishesAt).toBe(expected.toISOString());

      const text = formatBackfillPlan(plan);
      expect(text).toContain(`${CALLS} calls created 2000-01-01T00:00:00.000Z`);
      expect(text).toContain(`Finishes at ${expected.toISOString()}`);
      expect(text).toContain('599 requests/minute and 1800 of the daily cap of 2000');
      // Nothing was queued or recorded for the calls.
      expect(await db.job.count()).toBe(0);
      expect(await db.syncStatus.count()).toBe(0);
    } finally {
      await service.close();
      await budget.close();
    }
  });

  it('counts only the calls not yet synced, and says how many are', async () => {
    const db = current().db.prisma;
    const ids = sandbox.state.calls().map((c) => c.id);
    const at = new Date(clock.now());
    await db.syncStatus.createMany({
      data: [
        ...ids
          .slice(0, 3)
          .map((callId) => ({ callId, crm: 'hubspot', state: 'written_back', updatedAt: at })),
        { callId: ids[3]!, crm: 'hubspot', state: 'skipped', updatedAt: at },
        // Still in progress: a backfill queues it again, so it counts.
        { callId: ids[4]!, crm: 'hubspot', state: 'awaiting_analysis', updatedAt: at },
        // Another CRM's row says nothing about this one.
        { callId: ids[5]!, crm: 'salesforce', state: 'written_back', updatedAt: at },
      ],
    });
    const ledger = createDbSlotLedger({ db });
    const budget = createRequestBudget({ limits: LIMITS, clock, ledger, ...RESERVES });
    const service = createServiceClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey, budget, clock });
    try {
      const plan = await planBackfill(
        { db, crm: 'hubspot', service, clock, ledger, limits: LIMITS, reserves: RESERVES },
        { sinceMs: Date.UTC(2000, 0, 1), untilMs: clock.now() },
      );
      expect({ listed: plan.listed, calls: plan.calls }).toEqual({ listed: CALLS, calls: CALLS - 4 });
      expect(formatBackfillPlan(plan)).toContain(
        `${CALLS - 4} calls to sync of ${CALLS} calls created 2000-01-01T00:00:00.000Z`,
      );
      expect(formatBackfillPlan(plan)).toContain('(4 already synced)');
    } finally {
      await service.close();
      await budget.close();
      await db.syncStatus.deleteMany();
    }
  });

  it('says how long in minutes, hours or days, never "0.0 h"', () => {
    expect(inWords(90_000)).toBe('in about 2 min');
    expect(inWords(59 * 60_000)).toBe('in about 59 min');
    expect(inWords(3 * 3_600_000)).toBe('in about 3.0 h');
    expect(inWords(72 * 3_600_000)).toBe('in about 3.0 days');
  });

  it('is what `crm-sync backfill --since DATE --plan` prints', async () => {
    // A copy of the migrated template: the child neither runs initdb nor migrates.
    const target = await createMigratedDatabase('embedded');
    let failed = true;
    try {
      const { code, stdout, stderr } = await crmSync(['backfill', '--since', '2000-01-01', '--plan'], {
        SERVICE_API_BASE_URL: sandbox.url,
        SERVICE_API_KEY: sandbox.apiKey,
        SERVICE_WEBHOOK_SECRET: sandbox.webhookSecret,
        SERVICE_PLAN: 'enterprise',
        SERVICE_RATE_PER_MINUTE: String(LIMITS.ratePerMinute),
        SERVICE_BURST_PER_SECOND: String(LIMITS.burstPerSecond),
        SERVICE_DAILY_CAP: String(LIMITS.dailyCap),
        DATA_DIR: target.dataDir,
        CONFIG_DIR,
      });
      expect(stderr).toBe('');
      expect(code).toBe(0);
      expect(stdout).toContain(
        `Backfill plan (nothing queued): ${CALLS} calls to sync of ${CALLS} calls created 2000-01-01T00:00:00.000Z`,
      );
      expect(stdout).toMatch(/Service requests needed: about 2010 \(2\.01 per call, default/);
      expect(stdout).toMatch(/^Finishes at \d{4}-\d\d-\d\dT[\d:.]+Z/m);
      failed = false;
    } finally {
      await target.drop(failed);
    }
  }, 30_000);
});
