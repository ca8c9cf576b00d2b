/**
 * The CRM as the ledger of last resort. A worker on a fresh database (a lost volume, a move to
 * PostgreSQL, a second install) knows nothing of the calls another worker already wrote; before
 * it asks the Service for follow-ups or writes anything, it asks the CRM what it holds for the
 * calls it has no record of, once per write-back batch. Calls the local database already knows
 * about cost nothing, so the steady state pays no CRM request for this.
 */
import type { WrittenCall } from '../crm/types.js';
import { writtenQueryFor, type Mapping } from '../mapping/index.js';
import { claimFollowupGeneration } from '../store/followupRepo.js';
import { transitionSyncStatus, type SyncStatusRecord } from '../store/syncStatusRepo.js';
import type { SyncState } from '../sync/states.js';
import type { PipelineDeps } from './deps.js';
import { moveTo } from './writeback.js';

/** What the check needs of the pipeline's dependencies. */
export type LedgerDeps = Pick<PipelineDeps, 'db' | 'crmName' | 'crm' | 'mapping' | 'clock' | 'logger'>;

/** Per call id: what the CRM holds (absent: nothing), or why it could not be asked. */
export type Ledger = Map<string, WrittenCall | Error>;

/**
 * Whether the local database knows nothing of this call's activity or follow-ups. A call this
 * database pushed live context for was seen from its start, so no other worker wrote it before:
 * live calls, the steady state, cost no CRM request here.
 */
export function needsLedgerCheck(status: SyncStatusRecord | null): boolean {
  if (!status) return true;
  return (
    status.contextPushedAt === null &&
    status.crmActivityId === null &&
    status.followupsRequestedAt === null &&
    status.crmFollowupIds.length === 0
  );
}

/**
 * One `findWritten` for the batch's calls the local database has no record of writing, judged by
 * their rows in `statuses` (getSyncStatuses, read once for the batch).
 */
export async function readLedger(
  deps: LedgerDeps,
  callIds: string[],
  statuses: ReadonlyMap<string, SyncStatusRecord>,
): Promise<Ledger> {
  const ledger: Ledger = new Map();
  const unknown = [...new Set(callIds)].filter((callId) => needsLedgerCheck(statuses.get(callId) ?? null));
  if (unknown.length === 0) return ledger;
  try {
    const found = await deps.crm.findWritten(unknown, writtenQueryFor(deps.mapping));
    for (const [callId, written] of found) ledger.set(callId, written);
  } catch (error) {
    // Not knowing what the CRM holds, nothing is generated or written for these calls: they retry.
    const err = error instanceof Error ? error : new Error(String(error));
    for (const callId of unknown) ledger.set(callId, err);
  }
  return ledger;
}

/** Whether the CRM holds the call's whole write-back: its activity, and drafts if the mapping writes any. */
export function holdsEverything(mapping: Mapping, written: WrittenCall | Error | undefined): boolean {
  if (!written || written instanceof Error || !written.activityId) return false;
  return mapping.writeback.followups === null || written.followups.length > 0;
}

/**
 * Adopts what the CRM holds when it is the whole write-back: the activity, and its drafts unless
 * the mapping writes none. The local row takes the CRM ids and becomes written_back; follow-up
 * generation is marked done, so nothing is asked of the Service or written. Returns the detail
 * then, else undefined (nothing, or only the activity, is there: the write-back goes on, and
 * upserts that activity on the call id).
 */
export async function adoptWritten(
  deps: LedgerDeps,
  record: SyncStatusRecord,
  written: WrittenCall | undefined,
): Promise<string | undefined> {
  const { db, crmName: crm, clock } = deps;
  if (!written || !holdsEverything(deps.mapping, written)) return undefined;
  const crmFollowupIds = written.followups.map((f) => f.crmId);
  const now = new Date(clock.now());
  if (deps.mapping.writeback.followups) await claimFollowupGeneration(db, record.callId, crm, now);
  const detail = `found in the CRM: activity ${written.activityId} and ${crmFollowupIds.length} follow-up(s); nothing written`;
  await toWritingBack(deps, record);
  await transitionSyncStatus(db, {
    callId: record.callId,
    crm,
    to: 'written_back',
    now,
    detail,
    set: { writtenBackAt: now, crmActivityId: written.activityId, crmFollowupIds },
  });
  deps.logger.info({ callId: record.callId, crm }, 'call already written to the CRM; local record caught up');
  return detail;
}

/** The shortest way the state table allows from wherever the call is to writing_back. */
async function toWritingBack(deps: LedgerDeps, record: SyncStatusRecord): Promise<void> {
  const via: Partial<Record<SyncState, SyncState>> = { failed: 'awaiting_analysis', skipped: 'discovered' };
  let state = record.state;
  const step = via[state];
  if (step) {
    await moveTo(deps, { callId: record.callId, state }, step, 'found written in the CRM');
    state = step;
  }
  await moveTo(deps, { callId: record.callId, state }, 'writing_back', 'found written in the CRM');
}
