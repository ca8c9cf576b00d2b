/**
 * One call as `crm-sync status --call ID` shows it, whether the CLI reads the database itself or
 * asks the running worker (/admin/calls/:id): its sync row, its history, and its deal signals.
 */
import type { CrmName } from '../crm/types.js';
import type { Db } from '../store/database.js';
import { callDealSignals, type CallDealSignals } from '../store/dealSignalRepo.js';
import { syncHistory, type SyncEventRecord } from '../store/syncEventRepo.js';
import { getSyncStatus } from '../store/syncStatus/queries.js';
import { type SyncStatusRecord } from '../store/syncStatus/row.js';

export interface CallView {
  status: SyncStatusRecord;
  history: SyncEventRecord[];
  dealSignals: CallDealSignals | null;
}

export async function loadCallView(db: Db, crm: CrmName, callId: string): Promise<CallView | null> {
  const status = await getSyncStatus(db, callId, crm);
  if (!status) return null;
  return {
    status,
    history: await syncHistory(db, callId, { crm }),
    dealSignals: await callDealSignals(db, crm, callId),
  };
}
