/**
 * The write-back's decision for one call (pure): from what was gathered so far (gather.ts) to what
 * happens to it: nothing, an end (skipped, failed), a wait for its analysis, adoption of what the
 * CRM already holds, or a write, each with the state the call moves to and why. While it lacks a
 * fact it answers which one to gather next, in the order the requests are paid for: the call (a
 * Service read, unless the job carried a settled copy), its analysis (a Service read), then the
 * participant's CRM lookup. Nothing is read that an earlier fact makes unnecessary.
 */
import type { CrmLookup, WrittenCall } from '../../crm/types.js';
import type { Mapping } from '../../mapping/index.js';
import type { Analysis, Call } from '../../service/types.js';
import type { DraftInput, FollowupDraftRecord } from '../../store/followupRepo.js';
import type { SyncStatusRecord } from '../../store/syncStatus/row.js';
import { noMatchReason } from '../../sync/skipReasons.js';
import { analysisGiveUpReason, analysisWaitMs } from '../analysisWait.js';
import { callPhaseOf, endedReason } from '../callStatus.js';
import { ANALYSIS_SAFETY_CHECK_MS } from '../route.js';

/** The Service answered that the call's analysis is not ready yet (ServiceNotReadyError). */
export const ANALYSIS_NOT_READY = 'not_ready';

/** What is known of one call of the batch; the later fields come as decide asks for them. */
export interface WritebackFacts {
  /** The job is an operator's replay. */
  replay: boolean;
  /** The call's row and stored drafts as the batch read them, before any of its work. */
  status: Pick<SyncStatusRecord, 'state'> | null;
  drafts: readonly Pick<FollowupDraftRecord, 'crmId' | 'raw'>[];
  /** The Service's copy of the call (the job's settled copy, else read). */
  call?: Call | undefined;
  /** The call's row once the call's facts were recorded (or the database refused them). */
  record?: Pick<SyncStatusRecord, 'state' | 'createdAt' | 'followupsRequestedAt'> | Error | undefined;
  /** What the CRM holds for the call (crmLedger.ts): absent when nothing, or not asked. */
  ledger?: WrittenCall | Error | undefined;
  analysis?: Analysis | typeof ANALYSIS_NOT_READY | undefined;
  lookup?: CrmLookup | undefined;
}

export interface DecideContext {
  mapping: Mapping;
  /** The clock's now (ms): how old the call is, how long it was waited for. */
  now: number;
}

export type Decision =
  /** A fact to gather before deciding. */
  | { kind: 'need'; what: 'call' | 'analysis' | 'lookup' }
  /** Nothing to do; the call does not move. */
  | { kind: 'done'; reason: string }
  /** A fact could not be had (the ledger could not be asked, the row was refused). */
  | { kind: 'error'; error: Error }
  /** The call's work ends here (endSync: a call already at an end keeps its state). */
  | { kind: 'end'; to: 'skipped' | 'failed'; code: string; reason: string }
  /** Not analysed yet: look again after `delayMs`. */
  | { kind: 'wait'; to: 'awaiting_analysis'; reason: string; delayMs: number }
  /** The CRM holds the whole write-back: adopt it (re-linked to the current match first). */
  | { kind: 'adopt'; to: 'written_back'; written: WrittenCall; reason: string }
  /**
   * Write the activity and drafts (or, `followupsOnly`, only drafts that arrived since the
   * activity was written). `generate`: follow-ups are to be asked for once the activity holds the
   * generation stamp (act.ts); `claimed` says the row already held a claim.
   */
  | {
      kind: 'write';
      to: 'written_back';
      followupsOnly: boolean;
      drafts: DraftInput[];
      generate: { email: string; claimed: boolean } | undefined;
      reason: string;
    };

export function decideWriteback(facts: WritebackFacts, ctx: DecideContext): Decision {
  const start = decideStart(facts, ctx.mapping);
  if ('done' in start) return { kind: 'done', reason: start.done };
  const { followupsOnly } = start;

  if (facts.record instanceof Error) return { kind: 'error', error: facts.record };
  const { call, record } = facts;
  if (!call || !record) return { kind: 'need', what: 'call' };
  if (facts.ledger instanceof Error) return { kind: 'error', error: facts.ledger };
  if (facts.ledger && holdsEverything(ctx.mapping, facts.ledger)) {
    return { kind: 'adopt', to: 'written_back', written: facts.ledger, reason: 'found written in the CRM' };
  }

  if (callPhaseOf(call.status) === 'ended') {
    return { kind: 'end', to: 'skipped', code: 'SKIPPED', reason: endedReason(call.status) };
  }
  if (call.status !== 'analyzed') {
    return waitForAnalysis(ctx.now, record, call, `call is ${call.status}`, ANALYSIS_SAFETY_CHECK_MS);
  }
  if (facts.analysis === undefined) return { kind: 'need', what: 'analysis' };
  if (facts.analysis === ANALYSIS_NOT_READY) {
    return waitForAnalysis(ctx.now, record, call, 'analysis not ready', 60_000);
  }

  const email = call.participant?.email;
  if (!email)
    return { kind: 'end', to: 'skipped', code: 'SKIPPED', reason: 'the call has no participant email' };
  const { lookup } = facts;
  if (!lookup) return { kind: 'need', what: 'lookup' };
  // Nobody to write to: no match now (a retry of an interrupted write whose contact merged away
  // included: writing_back -> skipped).
  if (lookup.matchedBy === 'none' || (!lookup.contact && !lookup.company)) {
    return { kind: 'end', to: 'skipped', code: 'SKIPPED', reason: noMatchReason(email) };
  }

  const drafts = facts.drafts.map((d) => d.raw as DraftInput);
  // Asked for after the activity is written with the generation stamp (act.ts).
  const generate =
    drafts.length === 0 && ctx.mapping.writeback.followups
      ? { email, claimed: record.followupsRequestedAt !== null }
      : undefined;
  return {
    kind: 'write',
    to: 'written_back',
    followupsOnly,
    drafts,
    generate,
    reason: followupsOnly ? 'follow-ups arrived since the call was written' : 'analysed',
  };
}

/**
 * What the batch's read of the call decides before any request: nothing to do, or a write (of
 * only the drafts that arrived since, for a call already written back).
 */
function decideStart(facts: WritebackFacts, mapping: Mapping): { done: string } | { followupsOnly: boolean } {
  const { status, replay } = facts;
  // A followup.generated job's draft (payload.followup) was stored by the inbox, in the
  // transaction that queued the job.
  if (status?.state === 'written_back') {
    const pending = facts.drafts.filter((d) => d.crmId === null);
    if (!replay && (pending.length === 0 || !mapping.writeback.followups))
      return { done: 'already written back' };
    return { followupsOnly: !replay };
  }
  if (status && (status.state === 'failed' || status.state === 'skipped') && !replay) {
    return { done: `call is ${status.state}; replay to retry` };
  }
  return { followupsOnly: false };
}

/**
 * Not analysed yet: wait, less often the older the call is (each check costs a Service request),
 * and give up after ANALYSIS_GIVE_UP_MS so a call the Service never analyses stops costing budget.
 */
function waitForAnalysis(
  now: number,
  record: Pick<SyncStatusRecord, 'createdAt'>,
  call: Call,
  why: string,
  floorMs: number,
): Decision {
  const created = Date.parse(call.created_at);
  const age = Number.isNaN(created) ? 0 : now - created;
  const giveUp = analysisGiveUpReason({ ageMs: age, seenForMs: now - record.createdAt.getTime(), why });
  if (giveUp) return { kind: 'end', to: 'failed', code: 'SERVICE_NOT_READY', reason: giveUp };
  return { kind: 'wait', to: 'awaiting_analysis', reason: why, delayMs: analysisWaitMs(age, floorMs) };
}

/**
 * Whether the CRM holds the call's whole write-back: its activity, and, if the mapping writes
 * follow-ups, drafts or the activity's stamp that follow-ups were asked for (a generation that
 * answered no drafts, or whose answer was lost, or drafts the mapping leaves without a call id).
 * Its links are checked when it is adopted (adoptAll, crmLedger.ts).
 */
export function holdsEverything(mapping: Mapping, written: WrittenCall | Error | undefined): boolean {
  if (!written || written instanceof Error || !written.activityId) return false;
  return (
    mapping.writeback.followups === null ||
    written.followups.length > 0 ||
    written.followupsGeneratedAt !== undefined
  );
}
