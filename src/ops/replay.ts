/**
 * Operator replays: put a call (or the failed calls, all or by error code and time window) back
 * to work. The CLI, the loopback admin API and the console all come here. The call's state moves back
 * to where work resumes and a write-back job is queued; the CRM write upserts on the call id, so
 * a replay of a written call updates its activity instead of adding one.
 */
import type { CrmName } from '../crm/types.js';
import { JOB_PRIORITY, writebackJobKey } from '../store/jobKinds.js';
import { inTransaction, type Db } from '../store/database.js';
import { enqueueJob } from '../store/jobEnqueue.js';
import { failureGroups, listFailedCalls, type FailedSelection } from '../store/syncStatusQueries.js';
import { moveSyncStatus } from '../store/syncMoves.js';
import { upsertDiscovered } from '../store/syncStatus/discovered.js';
import { getSyncStatus } from '../store/syncStatus/queries.js';
import { replayPath } from '../sync/states.js';
import type { ReplayRequest } from './replayRequest.js';

export interface ReplayResult {
  callIds: string[];
  /** When a code matched nothing: the codes the failed calls do have, so a typo is seen as one. */
  failedCodes?: { code: string | null; calls: number }[] | undefined;
}

export interface ReplayOptions {
  /** ReplayRequest.regenerateFollowups. */
  regenerateFollowups?: boolean | undefined;
}

export async function replayCall(
  db: Db,
  crm: CrmName,
  callId: string,
  now: Date,
  options: ReplayOptions = {},
): Promise<void> {
  await inTransaction(db, async (tx) => {
    const status =
      (await getSyncStatus(tx, callId, crm)) ?? (await upsertDiscovered(tx, { callId, crm, now })).record;
    const to = replayPath(status.state).at(-1);
    if (to) {
      await moveSyncStatus(tx, {
        callId,
        crm,
        from: status.state,
        to,
        now,
        detail: 'replay requested by an operator',
      });
    }
    // CONTRACT.md: follow-ups are generated once per call "unless an operator asks", and each
    // request makes new drafts. A replay is not that ask: a generation claimed before (answered,
    // uncertain, or still in flight elsewhere) is kept, and the write-back reuses what came of it.
    // Only --regenerate-followups (the console: a confirmed checkbox) clears the claim, and only
    // for a call with no drafts stored here or found in the CRM; late drafts of the first request
    // are still written when they come.
    if (
      options.regenerateFollowups &&
      status.followupsRequestedAt &&
      status.crmFollowupIds.length === 0 &&
      (await tx.callFollowup.count({ where: { callId } })) === 0
    ) {
      await tx.syncStatus.update({
        where: { callId_crm: { callId, crm } },
        data: { followupsRequestedAt: null, followupsSettledAt: null, updatedAt: now },
      });
    }
    await enqueueJob(tx, {
      kind: 'writeback',
      key: writebackJobKey(callId),
      payload: { callId, reason: 'replay' },
      priority: JOB_PRIORITY.writeback,
      now,
    });
  });
}

/** Replays the failed calls matching `selection` (every failed call when it is empty). */
export async function replayFailed(
  db: Db,
  crm: CrmName,
  now: Date,
  selection: FailedSelection = {},
  options: ReplayOptions = {},
  limit = 10_000,
): Promise<ReplayResult> {
  const failed = await listFailedCalls(db, crm, selection, limit);
  for (const f of failed) await replayCall(db, crm, f.callId, now, options);
  const callIds = failed.map((f) => f.callId);
  if (callIds.length > 0 || selection.code === undefined) return { callIds };
  const groups = await failureGroups(db, crm, 0);
  return { callIds, failedCodes: groups.map((g) => ({ code: g.code, calls: g.count })) };
}

/** Carries out an operator's replay request (parseReplayRequest). */
export async function runReplay(
  db: Db,
  crm: CrmName,
  request: ReplayRequest,
  now: Date,
): Promise<ReplayResult> {
  const options = { regenerateFollowups: request.regenerateFollowups };
  if ('callId' in request) {
    await replayCall(db, crm, request.callId, now, options);
    return { callIds: [request.callId] };
  }
  return replayFailed(db, crm, now, request.failed, options);
}
