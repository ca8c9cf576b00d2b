/** Recording a failed try of a call's sync (its state unchanged). */
import type { CrmName } from '../../crm/types.js';
import { inTransaction, type Db } from '../database.js';
import { addSyncEvent } from '../syncEventRepo.js';
import { SyncStatusNotFoundError, toSyncStatus, type SyncStatusRecord } from './row.js';

/** Longest error message kept; error bodies from CRMs can be whole HTML pages. */
const MAX_ERROR_MESSAGE = 2000;

/**
 * Records a failed try in the current state: attempts + 1, the error, and when to try again
 * (null = no automatic retry). The state is unchanged; the error is added to the history (unless
 * `history` is false).
 */
export async function recordSyncError(
  db: Db,
  input: {
    callId: string;
    crm: CrmName;
    code: string;
    message: string;
    nextAttemptAt: Date | null;
    now: Date;
    /** False when the caller's own history line already says it (a move to failed). */
    history?: boolean;
  },
): Promise<SyncStatusRecord> {
  return inTransaction(db, async (tx) => {
    const state = await lockState(tx, input.callId, input.crm);
    const row = await tx.syncStatus.update({
      where: { callId_crm: { callId: input.callId, crm: input.crm } },
      data: {
        attempts: { increment: 1 },
        lastErrorCode: input.code,
        lastErrorMessage: input.message.slice(0, MAX_ERROR_MESSAGE),
        nextAttemptAt: input.nextAttemptAt,
        updatedAt: input.now,
      },
    });
    if (input.history !== false) {
      await addSyncEvent(tx, {
        callId: input.callId,
        crm: input.crm,
        at: input.now,
        from: state,
        to: state,
        detail: `${input.code}: ${input.message}`,
      });
    }
    return toSyncStatus(row);
  });
}

/** Locks the row for the rest of the transaction and returns its state. */
async function lockState(tx: Db, callId: string, crm: CrmName): Promise<string> {
  const rows = await tx.$queryRaw<{ state: string }[]>`
    SELECT state FROM sync_status WHERE call_id = ${callId} AND crm = ${crm} FOR UPDATE`;
  const state = rows[0]?.state;
  if (state === undefined) throw new SyncStatusNotFoundError(callId, crm);
  return state;
}
