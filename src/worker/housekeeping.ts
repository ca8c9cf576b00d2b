/**
 * The poll leader's housekeeping: pruning, re-queueing calls that stopped moving (NO_PROGRESS),
 * orphan drafts, due deal signals, and the drift check every minute. What each does and why:
 * docs/reliability.md, "Housekeeping".
 */
import type { CrmName } from '../crm/types.js';
import type { DriftMonitor } from '../drift/monitor.js';
import type { Logger } from '../log/logger.js';
import { JOB_PRIORITY, writebackJobKey, type WritebackJobPayload } from '../store/jobKinds.js';
import { Prisma } from '../generated/prisma/client.js';
import type { Db } from '../store/database.js';
import { pruneDoneJobs } from '../store/jobAdmin.js';
import { draftsJob } from '../store/draftsJob.js';
import { enqueueJob } from '../store/jobEnqueue.js';
import { pruneWebhookInbox } from '../store/webhookInboxRepo.js';
import { endSync } from '../store/syncMoves.js';
import { CALL_ID_ORDER } from '../store/lockOrder.js';
import { ACTIVE_SYNC_STATES, type SyncState } from '../sync/states.js';
import type { Clock } from '../util/clock.js';

export const KEEP_WEBHOOKS_MS = 30 * 24 * 3_600_000;
export const KEEP_DONE_JOBS_MS = 7 * 24 * 3_600_000;
/** A call changed this recently is left alone: whatever changed it may still be queuing its work. */
export const STRANDED_AFTER_MS = 5 * 60_000;
/**
 * Unwritten drafts received this recently are left alone. Short: drafts are stored in the
 * statement that queues their job (the inbox's, the follow-up answer's, draftsJob.ts), or by the
 * run that writes them, and the sweep passes over calls with a queued or running job, so the age
 * only has to cover replicas' clocks (received_at is the storing process's time) and a statement
 * still committing. It was STRANDED_AFTER_MS while the sweep was the only writer of late drafts.
 */
export const ORPHAN_DRAFTS_AFTER_MS = 60_000;
const PRUNE_EVERY_MS = 3_600_000;
const REQUEUE_EVERY_MS = 5 * 60_000;
const REQUEUE_BATCH = 500;
/** Write-backs queued for a call that did not move it, before it fails with NO_PROGRESS. */
export const MAX_REQUEUES = 3;
export const NO_PROGRESS = 'NO_PROGRESS';
const DRIFT_CHECK_EVERY_MS = 60_000;

export async function pruneOldRows(db: Db, nowMs: number): Promise<{ webhooks: number; jobs: number }> {
  const webhooks = await pruneWebhookInbox(db, new Date(nowMs - KEEP_WEBHOOKS_MS));
  const jobs = await pruneDoneJobs(db, new Date(nowMs - KEEP_DONE_JOBS_MS));
  return { webhooks, jobs };
}

export interface StrandedCall {
  callId: string;
  state: string;
  /** True when it was failed (NO_PROGRESS) instead of queued. */
  gaveUp: boolean;
}

/**
 * Finds calls of `crm` in a working state, unchanged for STRANDED_AFTER_MS, with no queued or
 * running job, and queues a write-back job for each (it runs now), counting it on the call; a
 * call queued MAX_REQUEUES times since it last moved is failed with NO_PROGRESS instead. Returns
 * the calls found.
 */
export async function requeueStrandedCalls(
  db: Db,
  input: { crm: CrmName; nowMs: number; limit?: number },
): Promise<StrandedCall[]> {
  const { crm } = input;
  const now = new Date(input.nowMs);
  const quietSince = new Date(input.nowMs - STRANDED_AFTER_MS);
  const rows = await db.$queryRaw<{ call_id: string; state: string; requeues: number }[]>`
    SELECT s.call_id, s.state, s.requeues FROM sync_status s
    WHERE s.crm = ${crm}
      AND s.state IN (${Prisma.join([...ACTIVE_SYNC_STATES])})
      AND s.updated_at <= ${quietSince}
      AND ${noJobFor(Prisma.sql`s.call_id`)}
    ORDER BY s.updated_at
    LIMIT ${input.limit ?? REQUEUE_BATCH}`;
  const requeued: string[] = [];
  for (const row of rows) {
    if (row.requeues >= MAX_REQUEUES) {
      const message = `queued ${row.requeues} times by housekeeping without leaving ${row.state}; not queued again. Read its history, fix the cause, then replay`;
      await endSync(db, {
        callId: row.call_id,
        crm,
        from: row.state as SyncState,
        to: 'failed',
        code: NO_PROGRESS,
        message,
        now,
      });
      continue;
    }
    await queueWriteback(db, row.call_id, now);
    requeued.push(row.call_id);
  }
  await countRequeues(db, crm, requeued);
  return rows.map((r) => ({ callId: r.call_id, state: r.state, gaveUp: r.requeues >= MAX_REQUEUES }));
}

/** requeues + 1 on each call, in one statement; the rows locked in CALL_ID_ORDER. */
async function countRequeues(db: Db, crm: CrmName, callIds: string[]): Promise<void> {
  if (callIds.length === 0) return;
  await db.$executeRaw`
    WITH locked AS (
      SELECT call_id FROM sync_status WHERE crm = ${crm} AND call_id IN (${Prisma.join(callIds)})
      ORDER BY ${CALL_ID_ORDER} FOR UPDATE)
    UPDATE sync_status s SET requeues = s.requeues + 1
    FROM locked WHERE s.crm = ${crm} AND s.call_id = locked.call_id`;
}

/** SQL: no write-back or context job of the call is queued or running. */
function noJobFor(callId: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`NOT EXISTS (
        SELECT 1 FROM job j
        WHERE j.state IN ('queued', 'running')
          AND j.key IN ('writeback:' || ${callId}, 'context:' || ${callId}))`;
}

/** Queues the call's housekeeping write-back job (it reads the call and does what is left). */
async function queueWriteback(db: Db, callId: string, now: Date): Promise<void> {
  const payload: WritebackJobPayload = { callId, reason: 'housekeeping', call: null };
  await enqueueJob(db, {
    kind: 'writeback',
    key: writebackJobKey(callId),
    payload,
    priority: JOB_PRIORITY.backfill,
    now,
  });
}

/**
 * Finds calls of `crm` written back whose stored drafts have no CRM record yet, received at least
 * ORPHAN_DRAFTS_AFTER_MS ago, with no queued or running job, and queues each its drafts job: the
 * job finds the call written and writes only those drafts (writeback.ts startOf). Returns them.
 */
export async function requeueOrphanDrafts(
  db: Db,
  input: { crm: CrmName; nowMs: number; limit?: number },
): Promise<StrandedCall[]> {
  const now = new Date(input.nowMs);
  const quietSince = new Date(input.nowMs - ORPHAN_DRAFTS_AFTER_MS);
  const rows = await db.$queryRaw<{ call_id: string; state: string }[]>`
    SELECT s.call_id, s.state FROM sync_status s
    WHERE s.crm = ${input.crm} AND s.state = 'written_back'
      AND EXISTS (SELECT 1 FROM call_followup f
                  WHERE f.call_id = s.call_id AND f.crm_id IS NULL AND f.received_at <= ${quietSince})
      AND ${noJobFor(Prisma.sql`s.call_id`)}
    ORDER BY s.updated_at
    LIMIT ${input.limit ?? REQUEUE_BATCH}`;
  for (const row of rows) await enqueueJob(db, draftsJob(row.call_id, now));
  return rows.map((r) => ({ callId: r.call_id, state: r.state, gaveUp: false }));
}

export interface Housekeeping {
  /**
   * Does whatever housekeeping is due (pruning at most hourly, requeuing every five minutes, the
   * drift check every minute).
   */
  runDue(): Promise<void>;
}

export function createHousekeeping(deps: {
  db: Db;
  crm: CrmName;
  clock: Clock;
  logger: Logger;
  /** Counts each requeued call, by the state it was stranded in. */
  onRequeued?: (call: StrandedCall) => void;
  /** Told when jobs were queued, to wake the runner. */
  onEnqueued?: () => void;
  /** Writes the deals still due a deal-signal write (one whose last try failed for a passing reason). */
  flushDeals?: () => Promise<void>;
  drift?: DriftMonitor;
  /** The mapping writes follow-up drafts: drafts left unwritten are swept (requeueOrphanDrafts). */
  writesFollowups?: boolean;
  /** Counts each call queued for its unwritten drafts. */
  onOrphanDrafts?: (call: StrandedCall) => void;
}): Housekeeping {
  const { db, clock, logger } = deps;
  let lastPrune = Number.NEGATIVE_INFINITY;
  let lastRequeue = Number.NEGATIVE_INFINITY;
  let lastDriftCheck = Number.NEGATIVE_INFINITY;
  return {
    async runDue() {
      const now = clock.now();
      if (now - lastRequeue >= REQUEUE_EVERY_MS) {
        lastRequeue = now;
        const stranded = await requeueStrandedCalls(db, { crm: deps.crm, nowMs: now });
        for (const call of stranded) {
          if (call.gaveUp) {
            logger.warn(call, `${NO_PROGRESS}: call queued ${MAX_REQUEUES} times without moving; failed`);
            continue;
          }
          logger.info(call, 'call had no job left in a working state; queued a write-back to move it on');
          deps.onRequeued?.(call);
        }
        const orphans = deps.writesFollowups
          ? await requeueOrphanDrafts(db, { crm: deps.crm, nowMs: now })
          : [];
        for (const call of orphans) {
          logger.info(
            call,
            'call written back with drafts never written to the CRM; queued a write-back for them',
          );
          deps.onOrphanDrafts?.(call);
        }
        if (stranded.some((c) => !c.gaveUp) || orphans.length > 0) deps.onEnqueued?.();
        // Without this, such a deal would wait for the next write-back batch however long it takes.
        await deps.flushDeals?.();
      }
      if (deps.drift && now - lastDriftCheck >= DRIFT_CHECK_EVERY_MS) {
        lastDriftCheck = now;
        await deps.drift.check();
      }
      if (now - lastPrune >= PRUNE_EVERY_MS) {
        lastPrune = now;
        const pruned = await pruneOldRows(db, now);
        if (pruned.webhooks + pruned.jobs > 0)
          logger.info(pruned, 'pruned old webhook deliveries and finished jobs');
      }
    },
  };
}
