/**
 * Recording drafts as written to the CRM: which record each went to, fenced like the run's other
 * writes (src/store/fence.ts), and the statement part a call's move to written_back carries.
 */
import type { CrmName } from '../crm/types.js';
import { Prisma } from '../generated/prisma/client.js';
import type { Db } from './database.js';
import { fenceHolds, LeaseLostError, type Fence } from './fence.js';
import { lockCall } from './followupRepo.js';
import { after } from './lockOrder.js';
import { unnestRows } from './unnest.js';

/**
 * Records which CRM record each draft was written to; with `call`, also adds those records to the
 * call's crm_followup_ids (in the statement, so two runs never drop each other's) and sets its
 * warnings (a drafts-only write's end). A run that lost its lease records nothing
 * (LeaseLostError): the drafts stay unwritten here, and the next run upserts them again onto the
 * same CRM records (keyed on call id and draft id), so nothing is written twice.
 */
export async function markFollowupsWritten(
  db: Db,
  callId: string,
  written: { draftId: string; crmId: string }[],
  now: Date,
  opts: { fence?: Fence | undefined; call?: { crm: CrmName; warnings: string[] } } = {},
): Promise<void> {
  const { fence, call } = opts;
  if (written.length === 0 && !call) return;
  const w = unnestRows(
    [
      ['draft_id', 'text'],
      ['crm_id', 'text'],
    ],
    written.map((x) => [x.draftId, x.crmId]),
    'w',
  );
  // The lock order (lockOrder.ts): the call's row, its drafts, then the fence's job.
  const [row] = await db.$queryRaw<{ holds: boolean }[]>`
    WITH locked AS (${call ? lockCall(callId, call.crm) : Prisma.sql`SELECT 1`}),
    drafts AS (SELECT c.draft_id FROM call_followup c CROSS JOIN ${after('locked')}
               WHERE c.call_id = ${callId} ORDER BY c.draft_id FOR UPDATE OF c),
    f AS (SELECT ${fenceHolds(fence)} AS holds FROM ${after('drafts')}),
    marked AS (
      UPDATE call_followup c SET crm_id = w.crm_id, written_at = ${now}::timestamptz
      FROM ${w}, f WHERE c.call_id = ${callId} AND c.draft_id = w.draft_id AND f.holds
      RETURNING 1)${
        call
          ? Prisma.sql`,
    ids AS (
      UPDATE sync_status s
      SET crm_followup_ids = s.crm_followup_ids
            || ARRAY(SELECT w.crm_id FROM ${w} WHERE w.crm_id <> ALL (s.crm_followup_ids)),
          warnings = ${call.warnings}::text[], updated_at = ${now}::timestamptz
      FROM f WHERE s.call_id = ${callId} AND s.crm = ${call.crm} AND f.holds
      RETURNING 1)`
          : Prisma.empty
      }
    SELECT holds FROM f`;
  if (!row?.holds) throw new LeaseLostError(fence, `recording call ${callId}'s drafts as written`);
}

/**
 * The statement of markFollowupsWritten, null when there is nothing to mark; the write-back also
 * runs it inside the call's move to written_back (transitionSyncStatus's `alongside`).
 */
export function followupsWrittenUpdate(
  callId: string,
  written: { draftId: string; crmId: string }[],
  now: Date,
): Prisma.Sql | null {
  if (written.length === 0) return null;
  return Prisma.sql`
    UPDATE call_followup c SET crm_id = w.crm_id, written_at = ${now}::timestamptz
    FROM (VALUES ${Prisma.join(written.map((w) => Prisma.sql`(${w.draftId}, ${w.crmId})`))})
      AS w (draft_id, crm_id)
    WHERE c.call_id = ${callId} AND c.draft_id = w.draft_id`;
}
