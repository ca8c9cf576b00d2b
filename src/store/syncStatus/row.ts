/**
 * The sync_status row as the rest of crm-sync sees it: the record, its mapping from Prisma and
 * raw-SQL rows, and the warnings kept on it.
 */
import type { MatchDecision } from '../../crm/types.js';
import type { CrmName } from '../../crm/types.js';
import type { SyncStatus as SyncStatusRow } from '../../generated/prisma/client.js';
import { isSyncState, type SyncState } from '../../sync/states.js';

/** One call's sync with one CRM (table sync_status). */
export interface SyncStatusRecord {
  callId: string;
  crm: CrmName;
  state: SyncState;
  /** Failed tries in the current state. */
  attempts: number;
  lastErrorCode: string | null;
  lastErrorMessage: string | null;
  /** Write-backs housekeeping queued since the call last moved (NO_PROGRESS past a few). */
  requeues: number;
  nextAttemptAt: Date | null;
  contextPushedAt: Date | null;
  writtenBackAt: Date | null;
  crmContactId: string | null;
  crmCompanyId: string | null;
  crmDealId: string | null;
  crmActivityId: string | null;
  crmFollowupIds: string[];
  /** When follow-ups were requested from the Service (at most once per call). */
  followupsRequestedAt: Date | null;
  callCreatedAt: Date | null;
  participantEmail: string | null;
  participantCompany: string | null;
  overallScore: number | null;
  callStatus: string | null;
  /** Why these CRM records (null until a lookup ran, or for rows from before it was recorded). */
  matchDecision: MatchDecision | null;
  /** Problems that did not stop the sync, "CODE: message", newest last. */
  warnings: string[];
  createdAt: Date;
  updatedAt: Date;
}

/** Most warnings kept per call. */
export const MAX_WARNINGS = 20;

/** The call's warnings with `added` appended (each once), the oldest dropped past MAX_WARNINGS. */
export function mergeWarnings(existing: readonly string[], added: readonly string[]): string[] {
  const out = existing.filter((w) => !added.includes(w));
  out.push(...new Set(added));
  return out.slice(-MAX_WARNINGS);
}

export class SyncStatusNotFoundError extends Error {
  readonly code = 'SYNC_STATUS_NOT_FOUND';
  constructor(
    readonly callId: string,
    readonly crm: CrmName,
  ) {
    super(`no sync status for call ${callId} (${crm})`);
    this.name = 'SyncStatusNotFoundError';
  }
}

export function toSyncStatus(row: SyncStatusRow): SyncStatusRecord {
  if (!isSyncState(row.state)) throw new Error(`sync_status ${row.callId}: unknown state "${row.state}"`);
  if (row.crm !== 'hubspot' && row.crm !== 'salesforce') {
    throw new Error(`sync_status ${row.callId}: unknown crm "${row.crm}"`);
  }
  return {
    callId: row.callId,
    crm: row.crm,
    state: row.state,
    attempts: row.attempts,
    lastErrorCode: row.lastErrorCode,
    lastErrorMessage: row.lastErrorMessage,
    requeues: row.requeues,
    nextAttemptAt: row.nextAttemptAt,
    contextPushedAt: row.contextPushedAt,
    writtenBackAt: row.writtenBackAt,
    crmContactId: row.crmContactId,
    crmCompanyId: row.crmCompanyId,
    crmDealId: row.crmDealId,
    crmActivityId: row.crmActivityId,
    crmFollowupIds: [...row.crmFollowupIds],
    followupsRequestedAt: row.followupsRequestedAt,
    callCreatedAt: row.callCreatedAt,
    participantEmail: row.participantEmail,
    participantCompany: row.participantCompany,
    overallScore: row.overallScore,
    callStatus: row.callStatus,
    matchDecision: (row.matchDecision ?? null) as MatchDecision | null,
    warnings: [...(row.warnings ?? [])],
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** A sync_status row as raw SQL returns it. */
export interface SyncStatusRaw {
  call_id: string;
  crm: string;
  state: string;
  attempts: number;
  last_error_code: string | null;
  last_error_message: string | null;
  requeues: number;
  next_attempt_at: Date | null;
  context_pushed_at: Date | null;
  written_back_at: Date | null;
  crm_contact_id: string | null;
  crm_company_id: string | null;
  crm_deal_id: string | null;
  crm_activity_id: string | null;
  crm_followup_ids: string[] | null;
  followups_requested_at: Date | null;
  call_created_at: Date | null;
  participant_email: string | null;
  participant_company: string | null;
  overall_score: number | null;
  call_status: string | null;
  match_decision: unknown;
  warnings: string[] | null;
  followups_settled_at: Date | null;
  followups_claim_job?: bigint | null;
  followups_claim_epoch?: bigint | null;
  created_at: Date;
  updated_at: Date;
}

export function fromRaw(r: SyncStatusRaw): SyncStatusRow {
  return {
    callId: r.call_id,
    crm: r.crm,
    state: r.state,
    attempts: r.attempts,
    lastErrorCode: r.last_error_code,
    lastErrorMessage: r.last_error_message,
    requeues: r.requeues,
    nextAttemptAt: r.next_attempt_at,
    contextPushedAt: r.context_pushed_at,
    writtenBackAt: r.written_back_at,
    crmContactId: r.crm_contact_id,
    crmCompanyId: r.crm_company_id,
    crmDealId: r.crm_deal_id,
    crmActivityId: r.crm_activity_id,
    crmFollowupIds: r.crm_followup_ids ?? [],
    followupsRequestedAt: r.followups_requested_at,
    callCreatedAt: r.call_created_at,
    participantEmail: r.participant_email,
    participantCompany: r.participant_company,
    overallScore: r.overall_score,
    callStatus: r.call_status,
    matchDecision: (r.match_decision ?? null) as SyncStatusRow['matchDecision'],
    warnings: r.warnings ?? [],
    followupsSettledAt: r.followups_settled_at ?? null,
    followupsClaimJob: r.followups_claim_job ?? null,
    followupsClaimEpoch: r.followups_claim_epoch ?? null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}
