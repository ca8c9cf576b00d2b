/**
 * `doctor`'s and `mappings preview`'s Service requests are paid from the workers' ledger in the
 * database: beside a worker holding the Service at its burst limit, the strict sandbox (which
 * answers 429 to any request over the plan) sees none. Without a database the command says, in one
 * line, that its requests are outside the shared budget.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequestBudget } from '../../src/budget/index.js';
import { checkServiceKey } from '../../src/cli/commands/doctorService.js';
import { openServiceFromConfig } from '../../src/cli/serviceFromConfig.js';
import { parseConfig } from '../../src/config/config.js';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import { createServiceClient } from '../../src/service/index.js';
import { createDbSlotLedger } from '../../src/store/dbSlotLedger.js';
import { systemClock } from '../../src/util/clock.js';
import {
  createMigratedDatabase,
  openTestDatabase,
  TEST_DATABASE_URL,
  type TestDatabase,
} from '../store/helpers.js';
import { CONFIG_DIR } from './helpers.js';

const LIMITS = { ratePerMinute: 600, burstPerSecond: 4, dailyCap: null };

function configFor(svc: ServiceSandbox, over: Record<string, string>) {
  return parseConfig(
    {
      SERVICE_API_BASE_URL: svc.url,
      SERVICE_API_KEY: svc.apiKey,
      SERVICE_WEBHOOK_SECRET: svc.webhookSecret,
      SERVICE_PLAN: 'enterprise',
      SERVICE_RATE_PER_MINUTE: String(LIMITS.ratePerMinute),
      SERVICE_BURST_PER_SECOND: String(LIMITS.burstPerSecond),
      SERVICE_DAILY_CAP: 'unlimited',
      CONFIG_DIR,
      ...over,
    },
    { require: { service: true } },
  );
}

async function throttled(svc: ServiceSandbox): Promise<number> {
  const counters = (await (await fetch(`${svc.url}/_admin/counters`)).json()) as {
    byStatus: Record<string, number>;
  };
  return counters.byStatus['429'] ?? 0;
}

describe.skipIf(!TEST_DATABASE_URL)('CLI Service requests in the shared budget (PostgreSQL)', () => {
  let svc: ServiceSandbox;
  let target: TestDatabase;
  beforeAll(async () => {
    svc = await startServiceSandbox({ seedCalls: 3, limits: LIMITS });
    target = await createMigratedDatabase('postgres');
  });
  afterAll(async () => {
    await svc.close();
    await target.drop(false);
  });

  it("doctor beside a worker at full burst: 0 Service 429s, and doctor's requests are in the ledger", async () => {
    // The worker: its own budget on the same ledger, with far more queued than the burst allows.
    const workerDb = await openTestDatabase(target);
    const budget = createRequestBudget({
      limits: LIMITS,
      clock: systemClock,
      ledger: createDbSlotLedger({ db: workerDb.prisma }),
    });
    const worker = createServiceClient({ baseUrl: svc.url, apiKey: svc.apiKey, budget });
    try {
      const config = configFor(svc, { DATABASE_URL: target.url! });
      const before = await throttled(svc);
      const flood = Promise.all(
        Array.from({ length: 24 }, () => worker.listCallsPage({ limit: 1 }, { priority: 'backfill' })),
      );
      const notes: string[] = [];
      const checks = [];
      for (let i = 0; i < 4; i++) {
        const open = (c: typeof config, o: Parameters<typeof openServiceFromConfig>[1]) =>
          openServiceFromConfig(c, { ...o, note: (l) => notes.push(l) });
        checks.push(await checkServiceKey(open, config, {}));
      }
      await flood;
      expect(checks.map((c) => c.ok)).toEqual([true, true, true, true]);
      expect(notes).toEqual([]);
      expect((await throttled(svc)) - before).toBe(0);
      // Counted where the worker counts: 24 + 4 requests in today's ledger row.
      const [row] = await workerDb.prisma.$queryRaw<{ used: number }[]>`
        SELECT sum(used)::int AS used FROM budget_ledger`;
      expect(row!.used).toBeGreaterThanOrEqual(28);
    } finally {
      await worker.close();
      await budget.close();
      await workerDb.close();
    }
  });
});

describe('CLI Service requests without a database', () => {
  it('says so in one line, and creates no database', async () => {
    const svc = await startServiceSandbox({ seedCalls: 1, limits: LIMITS });
    const dataDir = mkdtempSync(path.join(tmpdir(), 'crm-sync-nodb-'));
    try {
      const notes: string[] = [];
      const service = await openServiceFromConfig(configFor(svc, { DATA_DIR: dataDir }), {
        note: (l) => notes.push(l),
      });
      expect(service.budgetScope).toBe('process');
      await service.client.listCallsPage({ limit: 1 }, { priority: 'writeback' });
      await service.close();
      expect(notes).toEqual([
        `note: this command's Service requests are not counted in the workers' shared budget: no database in DATA_DIR (${dataDir}) and no DATABASE_URL`,
      ]);
      expect(readdirSync(dataDir)).toEqual([]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
      await svc.close();
    }
  });
});
