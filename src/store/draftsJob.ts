/**
 * The one rule for drafts no running write-back will write (issue 22, rolling-deploy): they get
 * the call's write-back job at once, at write-back priority, instead of waiting for the
 * housekeeping sweep. That is drafts stored for a call already `written_back` (the answer of a run
 * that lost its lease, heard after the next run wrote or adopted the call; drafts an adoption found
 * stored but not in the CRM), and drafts stored by a run that lost its lease, whatever the call's
 * state (the run now holding the call may have read its drafts before they came). The job goes in
 * under the call's write-back key, so it joins a queued one or waits behind a running one; it
 * finds the call written and writes only the drafts without a CRM record (a drafts-only write:
 * pipelines/writeback/decide.ts, act.ts), each upserted on call id and draft id. A
 * `followup.generated` delivery queues its own job for a new draft (route.ts);
 * `requeueOrphanDrafts` (housekeeping.ts) stays the safety net.
 */
import type { CrmName } from '../crm/types.js';
import { Prisma } from '../generated/prisma/client.js';
import { JOB_PRIORITY, writebackJobKey, type WritebackJobPayload } from './jobKinds.js';
import type { Db } from './database.js';
import { after } from './lockOrder.js';
import { JOB_COLUMNS, jobsInsertFrom, jobValues, type EnqueueInput } from './jobEnqueue.js';
import { unnestRows } from './unnest.js';

/** The payload reason of a drafts job (the sweep's too), as the job list and logs show it. */
export const DRAFTS_JOB_REASON = 'drafts';

/** The write-back job that writes a written call's unwritten drafts. */
export function draftsJob(callId: string, now: Date): EnqueueInput {
  const payload: WritebackJobPayload = { callId, reason: DRAFTS_JOB_REASON, call: null };
  return { kind: 'writeback', key: writebackJobKey(callId), payload, priority: JOB_PRIORITY.writeback, now };
}

/**
 * A statement part that queues the call's drafts job when `when` (SQL over the statement's earlier
 * parts) is true; run after CTE `afterCte` (the lock order: the call's row and drafts, and any
 * fence's job, before queued job rows; lockOrder.ts). Returns the job's id when queued.
 */
export function draftsJobInsert(input: {
  callId: string;
  now: Date;
  when: Prisma.Sql;
  afterCte: string;
}): Prisma.Sql {
  const row = unnestRows(JOB_COLUMNS, [jobValues(draftsJob(input.callId, input.now))], 'j');
  return jobsInsertFrom(
    Prisma.sql`(SELECT j.* FROM ${row} CROSS JOIN ${after(input.afterCte)} WHERE ${input.when}) AS input`,
  );
}

/**
 * Queues the drafts job of a call that is `written_back` with drafts not yet in the CRM (the
 * adoption's check, after its move: drafts a `followup.generated` stored while the adopting job
 * was queued joined that job, and the adoption writes none). True when a job was queued or joined.
 */
export async function queueUnwrittenDrafts(
  db: Db,
  input: { callId: string; crm: CrmName; now: Date },
): Promise<boolean> {
  const { callId, crm, now } = input;
  const rows = await db.$queryRaw<{ id: bigint }[]>`
    WITH locked AS (
      SELECT state FROM sync_status WHERE call_id = ${callId} AND crm = ${crm} FOR UPDATE),
    jobs AS (${draftsJobInsert({
      callId,
      now,
      afterCte: 'locked',
      when: Prisma.sql`(SELECT state FROM locked) = 'written_back' AND EXISTS (
        SELECT 1 FROM call_followup f WHERE f.call_id = ${callId} AND f.crm_id IS NULL)`,
    })})
    SELECT id FROM jobs`;
  return rows.length > 0;
}
