/**
 * One call as the console shows it: its sync row, every sync_event, the CRM records it landed on
 * (with links) and why each was chosen (sync_status.match_decision, when recorded).
 */
import type { MatchChoice, MatchDecision } from '../crm/types.js';
import { callDealSignals, type CallDealSignals } from '../store/dealSignalRepo.js';
import { syncHistory, type SyncEventRecord } from '../store/syncEventRepo.js';
import { toSyncStatus, type SyncStatusRecord } from '../store/syncStatusRepo.js';
import type { ConsoleDeps } from './deps.js';
import type { RecordKind } from './links.js';

export interface LandedRecord {
  kind: RecordKind;
  id: string;
  url: string | null;
  /** Why this record: the match rule's own sentence, or null when not recorded. */
  why: MatchChoice | null;
}

export interface CallDetail {
  status: SyncStatusRecord;
  history: SyncEventRecord[];
  records: LandedRecord[];
  /** The whole decision, or null when the worker recorded none for this call. */
  matchDecision: MatchDecision | null;
  warnings: string[];
  /** The history line that recorded the context push, if any. */
  contextEvent: SyncEventRecord | null;
  /** Whether the call's deal signals reached the CRM; null when it is on no deal. */
  dealSignals: CallDealSignals | null;
}

export async function loadCallDetail(deps: ConsoleDeps, callId: string): Promise<CallDetail | null> {
  const row = await deps.db.syncStatus.findUnique({ where: { callId_crm: { callId, crm: deps.crm } } });
  if (!row) return null;
  const status = toSyncStatus(row);
  const history = await syncHistory(deps.db, callId, { crm: deps.crm });
  const decision = asMatchDecision(row.matchDecision);
  const records: LandedRecord[] = [];
  const add = (kind: RecordKind, id: string | null, why: MatchChoice | null) => {
    if (id) records.push({ kind, id, url: deps.links(kind, id), why });
  };
  add('contact', status.crmContactId, decision?.contact ?? null);
  add('company', status.crmCompanyId, decision?.company ?? null);
  add('deal', status.crmDealId, decision?.deal ?? null);
  add('activity', status.crmActivityId, null);
  return {
    status,
    history,
    records,
    matchDecision: decision,
    warnings: [...row.warnings],
    contextEvent: history.find((e) => e.toState === 'context_pushed' && e.fromState !== e.toState) ?? null,
    dealSignals: await callDealSignals(deps.db, deps.crm, callId),
  };
}

/** The stored JSON when it has the decision's shape; anything else counts as not recorded. */
function asMatchDecision(value: unknown): MatchDecision | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Partial<MatchDecision>;
  const choice = (c: unknown) => typeof c === 'object' && c !== null && 'reason' in c;
  return choice(v.contact) && choice(v.company) && choice(v.deal) ? (v as MatchDecision) : null;
}
