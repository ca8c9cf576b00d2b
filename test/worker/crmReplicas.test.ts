/**
 * Two workers on one PostgreSQL database against one HubSpot app whose limits the load needs
 * (issue 22, defect 4): HubSpot's ten-second window and its search limit are per app and per
 * account, so the replicas must count them together. Each worker runs in this process (the real
 * startWorker, HTTP and all) on the system clock; the HubSpot sandbox enforces its limits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/log/logger.js';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import { startWorker, type WorkerHandle } from '../../src/worker/app.js';
import { matchingParticipant, workerEnv, workerStatus } from '../../bench/worker/harness.js';
import { startWebhookRelay } from '../../chaos/lib/webhookRelay.js';
import { completeCall, createCall, waitFor } from '../e2e/harness.js';
import { createMigratedDatabase, TEST_DATABASE_URL, type TestDatabase } from '../store/helpers.js';

const CALLS = 40;
/** Small, so a two-worker write-back needs more: 12 per 2 s, and 5 searches a second. */
const LIMITS = { perWindow: 12, windowMs: 2_000, searchesPerSecond: 5 };

describe.runIf(TEST_DATABASE_URL)('two workers against one HubSpot app (PostgreSQL)', () => {
  let svc: ServiceSandbox;
  let hs: HubSpotSandbox;
  let database: TestDatabase;
  const workers: WorkerHandle[] = [];

  beforeAll(async () => {
    [svc, hs, database] = await Promise.all([
      startServiceSandbox({ plan: 'enterprise', seedCalls: 0 }),
      startHubSpotSandbox({ limits: LIMITS }),
      createMigratedDatabase('postgres'),
    ]);
  });
  afterAll(async () => {
    for (const w of workers) await w.stop(2_000).catch(() => undefined);
    await Promise.all([svc?.close(), hs?.close()]);
    await database?.drop(false);
  });

  it('draws no 429 from HubSpot: the windows and searches of both are counted once', async () => {
    const plan = {
      label: 'roomy',
      plan: 'enterprise' as const,
      limits: { ratePerMinute: 6_000, burstPerSecond: 500, dailyCap: null },
    };
    for (let i = 0; i < 2; i++) {
      const env = workerEnv({ svc, hs, close: async () => undefined }, plan, {
        databaseUrl: database.url,
        dataDir: database.dataDir,
      });
      const config = parseConfig(env, { require: { service: true, crm: true } });
      workers.push(await startWorker(config, { logger: silentLogger }));
    }
    // Webhooks to each worker in turn: both look participants up live and write calls back.
    let next = 0;
    const relay = await startWebhookRelay(() => workers[next++ % 2]!.url);
    svc.state.settings.webhookUrl = `${relay.url}/webhooks`;
    try {
      const people = Array.from({ length: CALLS }, (_, i) => matchingParticipant(i));
      const ids = await Promise.all(people.map((p) => createCall(svc, p)));
      await Promise.all(ids.map((id) => completeCall(svc, id)));
      await waitFor(
        'every call settled',
        async () => {
          const { calls } = await workerStatus(workers[0]!);
          return (calls.written_back ?? 0) + (calls.skipped ?? 0) + (calls.failed ?? 0) >= ids.length;
        },
        { timeoutMs: 240_000, intervalMs: 500 },
      );
    } finally {
      svc.state.settings.webhookUrl = undefined;
      await relay.close();
    }
    const searches = hs.state.requests.records.filter((r) => r.path.endsWith('/search')).length;
    const others = hs.state.requests.records.length - searches;
    // The load needed both limits.
    expect(searches).toBeGreaterThan(LIMITS.searchesPerSecond * 3);
    expect(others).toBeGreaterThan(LIMITS.perWindow * 3);
    expect(hs.state.limits.rejected).toEqual({ TEN_SECONDLY_ROLLING: 0, DAILY: 0, SECONDLY: 0 });
    const { calls } = await workerStatus(workers[0]!);
    expect(calls.written_back).toBe(CALLS);
  }, 300_000);
});
