/**
 * A call's moves of more than one step, and its end: every caller (the write-back, the CRM ledger,
 * job outcomes, replay, housekeeping) moves through here, along the path src/sync/states.ts decides.
 */
import type { CrmName } from '../crm/types.js';
import { IllegalTransitionError, isEndState, syncPath, type SyncState } from '../sync/states.js';
import type { Db } from './database.js';
import type { Fence } from './fence.js';
import { recordSyncError } from './syncStatus/errors.js';
import { transitionSyncStatus } from './syncStatus/transitions.js';

export interface SyncMove {
  callId: string;
  crm: CrmName;
  /** Where the caller last saw the call. */
  from: SyncState;
  to: SyncState;
  now: Date;
  detail: string;
  /** The job run moving it: no step once its lease is lost (LeaseLostError, src/store/fence.ts). */
  fence?: Fence | undefined;
}

/**
 * Moves the call from `from` to `to` along syncPath, one recorded move per step (nothing when it
 * is there already). Throws IllegalTransitionError when the table has no way.
 */
export async function moveSyncStatus(db: Db, move: SyncMove): Promise<void> {
  const path = syncPath(move.from, move.to);
  if (path === null) throw new IllegalTransitionError(move.callId, move.from, move.to);
  for (const to of path) {
    await transitionSyncStatus(db, {
      callId: move.callId,
      crm: move.crm,
      to,
      now: move.now,
      detail: move.detail,
      fence: move.fence,
    });
  }
}

/**
 * Ends the call's work as skipped or failed, with the reason; a failure's code becomes its last
 * error. A call the worker already left (written_back, failed, skipped) keeps its state and only
 * the reason is recorded: an end never undoes a write, nor moves a call an operator must decide on.
 */
export async function endSync(
  db: Db,
  input: Omit<SyncMove, 'to' | 'detail'> & { to: 'skipped' | 'failed'; code: string; message: string },
): Promise<void> {
  const { callId, crm, now, code, message } = input;
  const moves = !isEndState(input.from);
  if (moves) {
    const detail = input.to === 'failed' ? `${code}: ${message}` : message;
    await moveSyncStatus(db, { ...input, detail });
  }
  if (input.to === 'failed' || !moves) {
    // A move to failed already put the error in the history; this only keeps it as the last error.
    const history = !moves;
    await recordSyncError(db, { callId, crm, code, message, nextAttemptAt: null, now, history });
  }
}
