/**
 * Follow-up generation for one call, at most once: the request is claimed in the database once the
 * budget has granted its slot, released when the Service provably did not act, kept (FOLLOWUP_UNCERTAIN)
 * when it may have. Why: docs/reliability.md, "At-most-once follow-up generation".
 */
import type { CrmName } from '../crm/types.js';
import {
  serviceDidNotAct,
  ServiceError,
  ServiceResponseError,
  ServiceUnauthorizedError,
} from '../service/errors.js';
import {
  claimFollowupGeneration,
  listFollowupDrafts,
  releaseFollowupGeneration,
  saveFollowupAnswer,
  settleAbandonedFollowupClaim,
  settleFollowupClaim,
  type DraftInput,
} from '../store/followupRepo.js';
import { runAsLive } from '../store/livePriority.js';
import { retryWhileDatabaseAway } from '../store/whileAway.js';
import type { PipelineDeps } from './deps.js';
import type { WritebackItem } from './types.js';

export const FOLLOWUP_UNCERTAIN = 'FOLLOWUP_UNCERTAIN';

/**
 * True when the failed request surely made no drafts, so asking again is safe: the Service did not
 * act (429, 503, not sent), it refused the request (a 4xx: the job's own outcome then decides
 * whether to try again), or it was never sent: the 401 stop, or an error that is not a
 * ServiceError (the budget's, its database ledger's, a slot that lapsed before sending), since the client ends every request that
 * reached the wire in a ServiceError (transport.ts).
 */
export function followupRequestNotMade(error: unknown): boolean {
  if (!(error instanceof ServiceError)) return true;
  const refused =
    !(error instanceof ServiceResponseError) &&
    error.status !== undefined &&
    error.status >= 400 &&
    error.status < 500;
  return serviceDidNotAct(error) || refused || error instanceof ServiceUnauthorizedError;
}

/** Thrown by the claim when an earlier run holds it: that attempt is not sent. */
class FollowupClaimTaken extends Error {}

export async function generateFollowupsOnce(
  deps: Pick<PipelineDeps, 'db' | 'service' | 'clock' | 'logger'>,
  req: {
    callId: string;
    crm: CrmName;
    email: string;
    item: WritebackItem;
    /** Whether the call's row, as its write-back batch read it, holds a claim already. */
    claimed: boolean;
  },
): Promise<DraftInput[]> {
  const { db, clock } = deps;
  const { callId, crm } = req;
  const { run } = req.item;
  const fence = run?.fence;
  // Checked first too, so a rerun does not wait for a budget slot only to find the claim taken.
  if (req.claimed) return noteAbandonedClaim(deps, req);
  // Each attempt, inside its granted slot: claimed just before sending, released when the
  // Service surely did not act, so no claim is held while waiting for the budget or a retry.
  const claimedAround = async <T>(send: () => Promise<T>): Promise<T> => {
    // The live lane, so on the embedded database it does not wait behind bulk statements: the
    // client drops the slot if the claim takes too long (SEND_DEADLINE_MS).
    // The activity already carries the generation stamp, which tells any later run the Service
    // was asked: a stopping worker asks (stop() waits for it), as a run that lost its lease cannot
    // (the claim is fenced, and begin() refuses it).
    const claim = () => claimFollowupGeneration(db, callId, crm, new Date(clock.now()), fence);
    if (!(await runAsLive(claim))) {
      throw new FollowupClaimTaken();
    }
    let end: (() => void) | undefined;
    try {
      // A side effect from here: stop() waits for it rather than hand the job back mid-request.
      end = run?.begin(true);
      return await send();
    } catch (error) {
      if (followupRequestNotMade(error)) {
        // The database may be failing too: undo the claim once it is back, or the call would
        // be written without drafts and without a word.
        await retryWhileDatabaseAway(
          deps,
          'release a follow-up claim',
          () => releaseFollowupGeneration(db, callId, crm, new Date(clock.now()), fence),
          { context: { callId } },
        );
      }
      throw error;
    } finally {
      end?.();
    }
  };
  let drafts: DraftInput[];
  try {
    const opts = { priority: req.item.priority, aroundSend: claimedAround };
    drafts = (await deps.service.generateFollowups(
      callId,
      { recipients: [req.email] },
      opts,
    )) as DraftInput[];
  } catch (error) {
    if (error instanceof FollowupClaimTaken) return noteAbandonedClaim(deps, req);
    // Released already, or never claimed (the budget refused, or the claim's query failed).
    if (followupRequestNotMade(error)) throw error;
    const why = error instanceof ServiceError ? `${error.code}: ${error.message}` : String(error);
    // Recorded now, not with the write: it must survive this try failing later on.
    const warning = `${FOLLOWUP_UNCERTAIN}: the follow-up request failed after it may have reached the Service (${why}); not sent again, so drafts come only from followup.generated`;
    await retryWhileDatabaseAway(
      deps,
      'record a follow-up warning',
      () => settleFollowupClaim(db, { callId, crm, warning, now: new Date(clock.now()), fence }),
      { context: { callId } },
    );
    deps.logger.warn(
      { callId, code: FOLLOWUP_UNCERTAIN },
      'follow-up generation failed ambiguously; writing the call without drafts',
    );
    return [];
  }
  // An answer with no drafts leaves no other trace: unsettled, it would later read as a lost one.
  await retryWhileDatabaseAway(
    deps,
    'record a follow-up answer',
    () => saveFollowupAnswer(db, { callId, crm, drafts, now: new Date(clock.now()), fence }),
    { context: { callId } },
  );
  return drafts;
}

/**
 * The claim was taken by an earlier run; returns no drafts. If that run stopped between asking and hearing back (a
 * kill, a lost lease), whether the Service made drafts is unknown: warn as for an ambiguous
 * failure, and never ask again.
 */
async function noteAbandonedClaim(
  deps: Pick<PipelineDeps, 'db' | 'clock' | 'logger'>,
  req: { callId: string; crm: CrmName; item: WritebackItem },
): Promise<DraftInput[]> {
  const { callId, crm } = req;
  // Drafts stored since the batch read them (followup.generated answering that earlier request)
  // are its answer after all.
  const stored = await listFollowupDrafts(deps.db, callId);
  if (stored.length > 0) return stored.map((d) => d.raw as DraftInput);
  const warning = (claimedAt: Date) =>
    `${FOLLOWUP_UNCERTAIN}: the worker asking for follow-ups at ${claimedAt.toISOString()} stopped before the answer; not sent again, so drafts come only from followup.generated`;
  // Not retried here: if this fails the job fails, and its next run finds the claim unsettled still.
  const now = new Date(deps.clock.now());
  const fence = req.item.run?.fence;
  if (await settleAbandonedFollowupClaim(deps.db, { callId, crm, warning, now, fence })) {
    deps.logger.warn(
      { callId, code: FOLLOWUP_UNCERTAIN },
      'an earlier follow-up request ended without an answer; writing the call without drafts',
    );
  }
  return [];
}
