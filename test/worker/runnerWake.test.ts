import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CrmAdapter } from '../../src/crm/types.js';
import { silentLogger } from '../../src/log/logger.js';
import { loadMappings } from '../../src/mapping/index.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import type { PipelineDeps } from '../../src/pipelines/deps.js';
import { contextJobKey, JOB_PRIORITY } from '../../src/store/jobKinds.js';
import type { LookupCache } from '../../src/pipelines/lookupCache.js';
import type { ServiceClient } from '../../src/service/types.js';
import { enqueueJob } from '../../src/store/jobEnqueue.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { createJobRunner, DEFAULT_RUNNER_OPTIONS } from '../../src/worker/runner.js';
import { useMigratedDatabase } from '../store/helpers.js';

const CONFIG_DIR = path.join(import.meta.dirname, '..', '..', 'config');

/**
 * A live call's job is enqueued while the live lane is between looking and sleeping (its claim
 * found nothing a moment before): the wake-up must not be lost, or the job waits a whole idle poll.
 * The clock is manual and never advanced, so only the wake-up can start the second claim.
 */
describe('the live lane woken while it claims', () => {
  const database = useMigratedDatabase('embedded');

  it('claims the job at once instead of sleeping an idle poll', async () => {
    const prisma = database().db.prisma;
    const clock = new FakeClock(Date.now());
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let firstDone!: () => void;
    const firstClaimDone = new Promise<void>((resolve) => (firstDone = resolve));
    let secondClaim!: (claimed: number) => void;
    const claimedSecond = new Promise<number>((resolve) => (secondClaim = resolve));
    let claims = 0;
    // The live lane's client: its first claim answers only once released, the second is reported.
    const liveDb = new Proxy(prisma, {
      get(target, prop, receiver) {
        if (prop !== '$queryRaw') return Reflect.get(target, prop, receiver) as unknown;
        return async (sql: TemplateStringsArray, ...values: unknown[]) => {
          const rows = (await target.$queryRaw(sql, ...values)) as unknown[];
          if (!sql.join('?').includes('SKIP LOCKED')) return rows;
          claims += 1;
          if (claims === 1) {
            firstDone();
            await held;
          } else if (claims === 2) secondClaim(rows.length);
          return rows;
        };
      },
    });
    const metrics = createMetrics({ defaultMetrics: false });
    const pipeline: PipelineDeps = {
      db: prisma,
      crmName: 'hubspot',
      // The job itself fails at once; only its claim matters here.
      service: { getCall: () => Promise.reject(new Error('not in this test')) } as unknown as ServiceClient,
      crm: {} as CrmAdapter,
      mapping: loadMappings(CONFIG_DIR, 'hubspot'),
      lookups: {} as LookupCache,
      clock,
      logger: silentLogger,
      metrics,
    };
    const runner = createJobRunner(
      {
        pipeline,
        outcome: { db: prisma, crm: 'hubspot', workerId: 'w-wake', logger: silentLogger, metrics },
        clock,
        logger: silentLogger,
        liveDb,
      },
      { ...DEFAULT_RUNNER_OPTIONS, bulkConcurrency: 0 },
    );
    runner.start();
    await firstClaimDone;

    await enqueueJob(prisma, {
      kind: 'context',
      key: contextJobKey('call_wake'),
      payload: { callId: 'call_wake' },
      priority: JOB_PRIORITY.live,
      now: new Date(clock.now()),
    });
    runner.wake(new Set(['context']));
    release();
    expect(await claimedSecond).toBe(1);

    const stopped = runner.stop(1_000);
    await clock.advance(1_000);
    await stopped;
  });
});
