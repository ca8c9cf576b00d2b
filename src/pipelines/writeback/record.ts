/**
 * The write-back's database records: the outcome of a call whose decision needs no CRM write (an
 * end, a wait for its analysis, nothing), and the call written back (its CRM ids, its drafts' ids
 * and the move to written_back in one statement). Moves go through moveTo / endSync, along the
 * transition table's path (syncPath), fenced by the job run's lease.
 */
import type { WriteResult } from '../../crm/types.js';
import { followupsWrittenUpdate, markFollowupsWritten } from '../../store/followupWrites.js';
import { endSync } from '../../store/syncMoves.js';
import { mergeWarnings, type SyncStatusRecord } from '../../store/syncStatus/row.js';
import { transitionSyncStatus } from '../../store/syncStatus/transitions.js';
import type { PipelineDeps } from '../deps.js';
import { moveTo } from '../moveTo.js';
import type { PreparedWrite, WritebackResult } from '../types.js';
import type { Gathered } from './gather.js';

/**
 * Records the outcome of a call that needs no CRM write; undefined for the ones that do (adopt,
 * write: act.ts). Throws what the move throws (LeaseLostError among them): that call's error.
 */
export async function recordDecision(
  deps: Pick<PipelineDeps, 'db' | 'crmName' | 'clock'>,
  { item, facts, decision }: Gathered,
): Promise<WritebackResult | undefined> {
  switch (decision.kind) {
    case 'done':
      return { kind: 'done', detail: decision.reason };
    case 'error':
      return { kind: 'error', error: decision.error };
    case 'end': {
      const record = facts.record as SyncStatusRecord;
      // endSync: a call already at an end keeps it.
      await endSync(deps.db, {
        callId: record.callId,
        crm: deps.crmName,
        from: record.state,
        to: decision.to,
        code: decision.code,
        message: decision.reason,
        now: new Date(deps.clock.now()),
        fence: item.run?.fence,
      });
      return { kind: 'done', detail: decision.reason };
    }
    case 'wait':
      await moveTo(deps, facts.record as SyncStatusRecord, decision.to, decision.reason, item.run?.fence);
      return {
        kind: 'later',
        delayMs: decision.delayMs,
        detail: `${decision.reason}; waiting for its analysis`,
      };
    default:
      return undefined;
  }
}

/**
 * The call's row once its CRM writes are done: only the new drafts' ids for a drafts-only write;
 * else the move to written_back with the CRM ids, the drafts' ids in the same statement.
 */
export async function recordWritten(
  deps: Pick<PipelineDeps, 'db' | 'crmName' | 'clock' | 'logger'>,
  w: PreparedWrite,
  status: SyncStatusRecord | undefined,
  written: WriteResult | undefined,
  followups: { draftId: string; crmId: string }[],
): Promise<void> {
  const { db, crmName: crm, clock } = deps;
  const now = new Date(clock.now());
  const allFollowupIds = [...new Set([...(status?.crmFollowupIds ?? []), ...followups.map((f) => f.crmId)])];
  if (w.followupsOnly) {
    await markFollowupsWritten(db, w.callId, followups, now, {
      fence: w.item.run?.fence,
      call: { crm, warnings: mergeWarnings(status?.warnings ?? [], w.warnings) },
    });
    return;
  }
  const activity = written?.ok ? written : undefined;
  await transitionSyncStatus(db, {
    callId: w.callId,
    crm,
    to: 'written_back',
    now,
    detail: activity ? `activity ${activity.id} ${activity.created ? 'created' : 'updated'}` : 'written',
    set: {
      writtenBackAt: now,
      crmActivityId: activity?.id ?? status?.crmActivityId ?? null,
      crmContactId: w.lookup.contact?.id ?? null,
      crmCompanyId: w.lookup.company?.id ?? null,
      crmDealId: w.lookup.deals[0]?.id ?? null,
      crmFollowupIds: allFollowupIds,
      matchDecision: w.lookup.decision,
      warnings: mergeWarnings(status?.warnings ?? [], w.warnings),
    },
    // The drafts' CRM ids, in the same statement.
    alongside: followupsWrittenUpdate(w.callId, followups, now) ?? undefined,
    fence: w.item.run?.fence,
  });
  if (w.warnings.length > 0) {
    deps.logger.warn({ callId: w.callId, warnings: w.warnings }, 'written back without some optional fields');
  }
}
