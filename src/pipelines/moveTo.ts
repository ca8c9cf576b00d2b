/** Moves a call's sync state for a pipeline step, stamped with the pipeline's clock and CRM. */
import type { Fence } from '../store/fence.js';
import { moveSyncStatus } from '../store/syncMoves.js';
import type { SyncStatusRecord } from '../store/syncStatusRepo.js';
import type { SyncState } from '../sync/states.js';
import type { PipelineDeps } from './deps.js';

/** Moves the call to `to` from where the record saw it, along the table's path (syncPath). */
export async function moveTo(
  deps: Pick<PipelineDeps, 'db' | 'crmName' | 'clock'>,
  record: Pick<SyncStatusRecord, 'callId' | 'state'>,
  to: SyncState,
  detail: string,
  /** The job run moving it (src/store/fence.ts). */
  fence?: Fence,
): Promise<void> {
  const now = new Date(deps.clock.now());
  await moveSyncStatus(deps.db, {
    callId: record.callId,
    crm: deps.crmName,
    from: record.state,
    to,
    now,
    detail,
    fence,
  });
}
