import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CrmAdapter } from '../../src/crm/types.js';
import { silentLogger } from '../../src/log/logger.js';
import { loadMappings } from '../../src/mapping/index.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import type { PipelineDeps } from '../../src/pipelines/deps.js';
import { JOB_PRIORITY, writebackJobKey } from '../../src/store/jobKinds.js';
import type { LookupCache } from '../../src/pipelines/lookupCache.js';
import type { ServiceClient } from '../../src/service/types.js';
import { enqueueJob } from '../../src/store/jobEnqueue.js';
import { systemClock } from '../../src/util/clock.js';
import { createJobRunner, DEFAULT_RUNNER_OPTIONS } from '../../src/worker/runner.js';
import { useMigratedDatabase } from '../store/helpers.js';

const CONFIG_DIR = path.join(import.meta.dirname, '..', '..', 'config');

/**
 * A write-back batch waiting on the Service budget (on the sales plan a batch of 25 can wait close
 * to a minute) must not hold stop() past its drain limit; the job goes back to the queue.
 */
describe('runner stop with a write-back batch waiting on the Service', () => {
  const database = useMigratedDatabase('embedded');

  it('returns after drainMs and hands the job back', async () => {
    const db = database().db.prisma;
    let analysisAsked!: () => void;
    const asked = new Promise<void>((resolve) => (analysisAsked = resolve));
    // A Service read that never gets its budget slot.
    const service = {
      getAnalysis: () => {
        analysisAsked();
        return new Promise(() => undefined);
      },
    } as unknown as ServiceClient;
    const metrics = createMetrics({ defaultMetrics: false });
    const pipeline: PipelineDeps = {
      db,
      crmName: 'hubspot',
      service,
      // The CRM holds nothing for the call (its fresh-database check), so the batch goes on to the Service.
      crm: { findWritten: () => Promise.resolve(new Map()) } as unknown as CrmAdapter,
      mapping: loadMappings(CONFIG_DIR, 'hubspot'),
      lookups: {} as LookupCache,
      clock: systemClock,
      logger: silentLogger,
      metrics,
    };
    const call = {
      id: 'call_stop',
      status: 'analyzed',
      created_at: '2026-01-05T11:00:00.000Z',
      platform: 'zoom',
      participant: { name: 'Jane Doe', email: 'jane.doe@acme.example', company: 'Acme Corp' },
      methodology: 'MEDDIC',
    };
    const { id } = await enqueueJob(db, {
      kind: 'writeback',
      key: writebackJobKey('call_stop'),
      payload: { callId: 'call_stop', reason: 'backfill', call },
      priority: JOB_PRIORITY.backfill,
      now: new Date(Date.now() - 1_000),
    });
    const runner = createJobRunner(
      {
        pipeline,
        outcome: { db, crm: 'hubspot', workerId: 'w-stop', logger: silentLogger, metrics },
        clock: systemClock,
        logger: silentLogger,
      },
      { ...DEFAULT_RUNNER_OPTIONS, idlePollMs: 50 },
    );
    runner.start();
    await asked;

    const stopped = runner.stop(100).then(() => 'stopped');
    const limit = new Promise((resolve) => setTimeout(() => resolve('still waiting'), 5_000));
    expect(await Promise.race([stopped, limit])).toBe('stopped');
    const job = await db.job.findUniqueOrThrow({ where: { id: BigInt(id) } });
    expect({ state: job.state, lockedBy: job.lockedBy }).toEqual({ state: 'queued', lockedBy: null });
  });
});
