import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.js';
import type { Db } from '../../src/store/database.js';
import { enqueueJob } from '../../src/store/jobEnqueue.js';
import { completeJob, claimJobs, failJob, rescheduleJob } from '../../src/store/jobQueue.js';
import { upsertDiscovered } from '../../src/store/syncStatus/discovered.js';
import { recordSyncError } from '../../src/store/syncStatus/errors.js';
import { getSyncStatus } from '../../src/store/syncStatus/queries.js';
import { transitionSyncStatus } from '../../src/store/syncStatus/transitions.js';
import { insertWebhookOnce, markWebhookProcessed } from '../../src/store/webhookInboxRepo.js';
import type { SyncState } from '../../src/sync/states.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import {
  createHousekeeping,
  KEEP_DONE_JOBS_MS,
  KEEP_WEBHOOKS_MS,
  MAX_REQUEUES,
  NO_PROGRESS,
  pruneOldRows,
  requeueStrandedCalls,
  STRANDED_AFTER_MS,
} from '../../src/worker/housekeeping.js';
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

describe('requeueStrandedCalls', () => {
  const current = useMigratedDatabase('embedded');

  it('queues a write-back for a working call with no job left, and for nothing else', async () => {
    const db = current().db.prisma;
    const old = new Date(NOW - STRANDED_AFTER_MS - 1);
    const add = async (callId: string, to: SyncState | null, at = old) => {
      await upsertDiscovered(db, { callId, crm: 'hubspot', now: at });
      if (to) await transitionSyncStatus(db, { callId, crm: 'hubspot', to, now: at });
    };
    await add('c_discovered', null);
    await add('c_pushed', 'context_pushed');
    await add('c_awaiting', 'awaiting_analysis');
    await add('c_skipped', 'skipped');
    await add('c_recent', null, new Date(NOW - 1_000));
    await add('c_queued', null);
    await enqueueJob(db, { kind: 'context', key: 'context:c_queued', priority: 300, now: old });
    await upsertDiscovered(db, { callId: 'c_other_crm', crm: 'salesforce', now: old });
    // A job that failed for good does not count as work left.
    await failedJob(db, 'context:c_discovered', old);

    const requeued = await requeueStrandedCalls(db, { crm: 'hubspot', nowMs: NOW });
    expect(requeued.map((c) => [c.callId, c.state]).sort()).toEqual([
      ['c_awaiting', 'awaiting_analysis'],
      ['c_discovered', 'discovered'],
      ['c_pushed', 'context_pushed'],
    ]);
    const jobs = await db.job.findMany({ where: { state: 'queued', kind: 'writeback' } });
    expect(
      jobs.map((j) => [j.key, j.runAt.getTime(), (j.payload as { reason: string }).reason]).sort(),
    ).toEqual([
      ['writeback:c_awaiting', NOW, 'housekeeping'],
      ['writeback:c_discovered', NOW, 'housekeeping'],
      ['writeback:c_pushed', NOW, 'housekeeping'],
    ]);
    // Queued now, so the next pass finds nothing.
    expect(await requeueStrandedCalls(db, { crm: 'hubspot', nowMs: NOW })).toEqual([]);
  });

  it('runs from the poll leader at most every five minutes, logging and counting each call', async () => {
    const db = current().db.prisma;
    const clock = new FakeClock(NOW + DAY);
    await upsertDiscovered(db, { callId: 'c_lost', crm: 'hubspot', now: new Date(NOW) });
    const lines: string[] = [];
    const logger = createLogger({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const counted: string[] = [];
    let woken = 0;
    const housekeeping = createHousekeeping({
      db,
      crm: 'hubspot',
      clock,
      logger,
      onRequeued: (call) => counted.push(call.callId),
      onEnqueued: () => woken++,
    });
    await housekeeping.runDue();
    expect(counted).toContain('c_lost');
    expect(woken).toBe(1);
    expect(lines.some((l) => l.includes('"callId":"c_lost"') && l.includes('"level":30'))).toBe(true);

    // The job fails for good; the next pass is not due for five minutes.
    await failedJob(db, 'writeback:c_lost', new Date(clock.now()));
    await clock.advance(60_000);
    await housekeeping.runDue();
    expect(counted.filter((c) => c === 'c_lost')).toHaveLength(1);
    await clock.advance(4 * 60_000);
    await housekeeping.runDue();
    expect(counted.filter((c) => c === 'c_lost')).toHaveLength(2);
  });

  it('writes the deals still due a deal-signal write on the same five-minute beat', async () => {
    const clock = new FakeClock(NOW);
    let flushes = 0;
    const housekeeping = createHousekeeping({
      db: current().db.prisma,
      crm: 'hubspot',
      clock,
      logger: createLogger({ level: 'silent' }),
      flushDeals: async () => void flushes++,
    });
    await housekeeping.runDue();
    await clock.advance(60_000);
    await housekeeping.runDue();
    expect(flushes).toBe(1);
    await clock.advance(4 * 60_000);
    await housekeeping.runDue();
    expect(flushes).toBe(2);
  });
});

describe('a call housekeeping keeps queuing without it moving', () => {
  const current = useMigratedDatabase('embedded');

  /** One pass five minutes on; the write-back it queued runs, records an error and is done. */
  async function pass(db: Db, callId: string, nowMs: number, moveTo?: SyncState) {
    const found = await requeueStrandedCalls(db, { crm: 'hubspot', nowMs });
    const now = new Date(nowMs);
    await db.job.updateMany({ where: { key: `writeback:${callId}` }, data: { state: 'done' } });
    if (moveTo) await transitionSyncStatus(db, { callId, crm: 'hubspot', to: moveTo, now });
    else if (found.some((c) => !c.gaveUp)) {
      await recordSyncError(db, {
        callId,
        crm: 'hubspot',
        code: 'X',
        message: 'x',
        nextAttemptAt: null,
        now,
      });
    }
    return found.find((c) => c.callId === callId);
  }

  it(`fails with ${NO_PROGRESS} after ${MAX_REQUEUES} write-backs that did not move it, and a move starts the count again`, async () => {
    const db = current().db.prisma;
    const step = STRANDED_AFTER_MS + 1;
    let t = NOW;
    await upsertDiscovered(db, { callId: 'c_loop', crm: 'hubspot', now: new Date(t) });
    // Two write-backs that did nothing, then one that moved the call on: the count starts again.
    for (let i = 0; i < 2; i++) expect((await pass(db, 'c_loop', (t += step)))?.gaveUp).toBe(false);
    expect((await getSyncStatus(db, 'c_loop', 'hubspot'))?.requeues).toBe(2);
    expect((await pass(db, 'c_loop', (t += step), 'awaiting_analysis'))?.gaveUp).toBe(false);
    expect((await getSyncStatus(db, 'c_loop', 'hubspot'))?.requeues).toBe(0);

    for (let i = 0; i < MAX_REQUEUES; i++)
      expect((await pass(db, 'c_loop', (t += step)))?.gaveUp).toBe(false);
    const last = await pass(db, 'c_loop', (t += step));
    expect(last).toEqual({ callId: 'c_loop', state: 'awaiting_analysis', gaveUp: true });
    const row = await getSyncStatus(db, 'c_loop', 'hubspot');
    expect(row).toMatchObject({ state: 'failed', lastErrorCode: NO_PROGRESS });
    expect(row?.lastErrorMessage).toMatch(/queued 3 times by housekeeping without leaving awaiting_analysis/);
    // Failed is not a working state: nothing more is queued, ever.
    expect(await pass(db, 'c_loop', (t += step))).toBeUndefined();
    expect(await db.job.count({ where: { key: 'writeback:c_loop', state: 'queued' } })).toBe(0);
  });
});

/** Queues a job with `key`, claims it and fails it for good. */
async function failedJob(db: Db, key: string, now: Date): Promise<void> {
  await enqueueJob(db, { kind: 'k', key, priority: 1, now });
  const claimed = await claimJobs(db, {
    workerId: 'w',
    limit: 100,
    leaseMs: 1000,
    now,
    kinds: ['k', 'writeback'],
  });
  const job = claimed.find((j) => j.key === key)!;
  await failJob(db, { job, workerId: 'w', error: 'x', now, retryable: false });
  for (const other of claimed.filter((j) => j.key !== key)) {
    await rescheduleJob(db, { id: other.id, workerId: 'w', runAt: now, now });
  }
}
