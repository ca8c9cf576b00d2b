import { describe, expect, it } from 'vitest';
import { completeJob, claimJobs, enqueueJob } from '../../src/store/jobQueue.js';
import { insertWebhookOnce, markWebhookProcessed } from '../../src/store/webhookInboxRepo.js';
import { KEEP_DONE_JOBS_MS, KEEP_WEBHOOKS_MS, pruneOldRows } from '../../src/worker/housekeeping.js';
import { useMigratedDatabase } from '../store/helpers.js';

const DAY = 24 * 3_600_000;
const NOW = Date.UTC(2026, 5, 1);

describe('housekeeping', () => {
  const current = useMigratedDatabase('embedded');

  it('prunes old processed deliveries and finished jobs, keeps recent, unprocessed and failed ones', async () => {
    const db = current().db.prisma;
    const old = new Date(NOW - KEEP_WEBHOOKS_MS - DAY);
    const recent = new Date(NOW - DAY);
    for (const [id, at, processed] of [
      ['evt_old', old, true],
      ['evt_old_unprocessed', old, false],
      ['evt_recent', recent, true],
    ] as const) {
      const { record } = await insertWebhookOnce(db, {
        eventId: id,
        type: 't',
        callId: 'c',
        rawBody: '{}',
        receivedAt: at,
      });
      if (processed) await markWebhookProcessed(db, record.id, at);
    }
    const jobAt = new Date(NOW - KEEP_DONE_JOBS_MS - DAY);
    for (const key of ['old_done', 'old_queued'])
      await enqueueJob(db, { kind: 'k', key, priority: 1, now: jobAt });
    const [claimed] = await claimJobs(db, { workerId: 'w', limit: 1, leaseMs: 1000, now: jobAt });
    await completeJob(db, { id: claimed!.id, workerId: 'w', now: jobAt });

    expect(await pruneOldRows(db, NOW)).toEqual({ webhooks: 1, jobs: 1 });
    expect((await db.webhookInbox.findMany()).map((w) => w.eventId).sort()).toEqual([
      'evt_old_unprocessed',
      'evt_recent',
    ]);
    expect(await db.job.count()).toBe(1);
    expect(await pruneOldRows(db, NOW)).toEqual({ webhooks: 0, jobs: 0 });
  });
});
