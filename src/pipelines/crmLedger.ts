/**
 * The CRM as the ledger of last resort. A worker on a fresh database (a lost volume, a move to
 * PostgreSQL, a second install) knows nothing of the calls another worker already wrote; before
 * it asks the Service for follow-ups or writes anything, it asks the CRM what it holds for the
 * calls it has no record of, once per write-back batch. Calls the local database already knows
 * about cost nothing, so the steady state pays no CRM request for this.
 */
import type { CrmLookup, LinkMove, LinkMoveResult, WrittenCall } from '../crm/types.js';
import { linksOf, writtenQueryFor, type Mapping } from '../mapping/index.js';
import type { Call } from '../service/types.js';
import { queueUnwrittenDrafts } from '../store/draftsJob.js';
import { claimFollowupGeneration } from '../store/followupRepo.js';
import { followupsWrittenUpdate } from '../store/followupWrites.js';
import { mergeWarnings, transitionSyncStatus, type SyncStatusRecord } from '../store/syncStatusRepo.js';
import { FOLLOWUP_UNCERTAIN } from './followups.js';
import type { PipelineDeps } from './deps.js';
import { moveTo } from './moveTo.js';
import { sideEffect, stillGoing, type JobRun } from './jobRun.js';

/** What the check needs of the pipeline's dependencies. */
export type LedgerDeps = Pick<
  PipelineDeps,
  'db' | 'crmName' | 'crm' | 'mapping' | 'clock' | 'logger' | 'lookups'
>;

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

/**
 * Whether the CRM holds the call's whole write-back: its activity, and, if the mapping writes
 * follow-ups, drafts or the activity's stamp that follow-ups were asked for (a generation that
 * answered no drafts, or whose answer was lost, or drafts the mapping leaves without a call id).
 * Its links are checked when it is adopted (adoptAll).
 */
export function holdsEverything(mapping: Mapping, written: WrittenCall | Error | undefined): boolean {
  if (!written || written instanceof Error || !written.activityId) return false;
  return (
    mapping.writeback.followups === null ||
    written.followups.length > 0 ||
    written.followupsGeneratedAt !== undefined
  );
}

/** A call of the batch whose whole write-back the CRM holds (holdsEverything). */
export interface Adoption {
  jobId: number;
  record: SyncStatusRecord;
  call: Call;
  written: WrittenCall;
  /** The job run adopting it (jobRun.ts). */
  run?: JobRun | undefined;
}

/**
 * Adopts what the CRM holds for these calls, but only whole: an activity (or draft) found by
 * search may have been left without its links by a write that stopped between the upsert and the
 * association batch, so each is first re-linked to the call's current match, the batch's records
 * in one `moveActivityLinks` with `exact` (links read; missing ones made, others removed; nothing
 * written when all is in place). Then the local row takes the CRM ids and becomes written_back,
 * follow-up generation is marked done and stored drafts found there are marked written, so
 * nothing is asked of the Service or written again. A call whose re-link failed is not adopted:
 * it gets the error, and its job tries again. A call nobody matches now keeps the links it has
 * (as rematch does: never an activity on no record). Returns per job id the detail, or the error.
 */
export async function adoptAll(
  deps: LedgerDeps,
  adoptions: Adoption[],
): Promise<Map<number, string | Error>> {
  const out = new Map<number, string | Error>();
  if (adoptions.length === 0) return out;
  const lookups = await lookUpAll(deps, adoptions);
  // Re-linking writes to the CRM: the calls whose run was told to stop leave first.
  const { going, stopped } = stillGoing(adoptions, (a) => a.run);
  for (const { item, reason } of stopped) out.set(item.jobId, asError(reason));
  adoptions = going;
  const kind = deps.mapping.writeback.followups?.kind;
  const planned = adoptions.map((a) => {
    const lookup = lookups.get(a.jobId);
    if (!lookup || lookup instanceof Error || (!lookup.contact && !lookup.company))
      return { a, lookup, moves: [] };
    const to = linksOf(lookup);
    const move = (activityId: string, record?: LinkMove['record']) =>
      ({ callId: a.record.callId, activityId, record, from: {}, to, exact: true }) satisfies LinkMove;
    const drafts = kind ? a.written.followups.map((f) => move(f.crmId, kind)) : [];
    return { a, lookup, moves: [move(a.written.activityId!), ...drafts] };
  });
  let moved: LinkMoveResult[];
  try {
    moved = await sideEffect(
      adoptions.map((a) => a.run),
      () => deps.crm.moveActivityLinks(planned.flatMap((p) => p.moves)),
    );
  } catch (error) {
    for (const a of adoptions) out.set(a.jobId, asError(error));
    return out;
  }
  let at = 0;
  for (const { a, lookup, moves } of planned) {
    const mine = moved.slice(at, (at += moves.length));
    const failed = mine.find((r) => !r.ok);
    if (lookup instanceof Error || (failed && !failed.ok)) {
      out.set(a.jobId, lookup instanceof Error ? lookup : (failed as { error: Error }).error);
      continue;
    }
    const writes = mine.reduce((n, r) => n + (r.ok ? r.writes : 0), 0);
    try {
      out.set(a.jobId, await adoptOne(deps, a, moves.length > 0 ? lookup : undefined, writes));
    } catch (error) {
      out.set(a.jobId, asError(error));
    }
  }
  return out;
}

/** Each adoption's current match (batched), by job id; none for a call with no participant email. */
async function lookUpAll(deps: LedgerDeps, adoptions: Adoption[]): Promise<Map<number, CrmLookup | Error>> {
  const participantOf = (call: Call) =>
    call.participant?.email
      ? {
          email: call.participant.email,
          name: call.participant.name ?? undefined,
          company: call.participant.company ?? undefined,
        }
      : undefined;
  const asked = adoptions.flatMap((a) => {
    const p = participantOf(a.call);
    return p ? [{ a, p }] : [];
  });
  await deps.lookups.prefetch(asked.map((x) => x.p));
  const out = new Map<number, CrmLookup | Error>();
  await Promise.all(
    asked.map(async ({ a, p }) => {
      out.set(a.jobId, await deps.lookups.get(p).catch(asError));
    }),
  );
  return out;
}

async function adoptOne(
  deps: LedgerDeps,
  { record, written, run }: Adoption,
  lookup: CrmLookup | undefined,
  writes: number,
): Promise<string> {
  const { db, crmName: crm, clock } = deps;
  const crmFollowupIds = written.followups.map((f) => f.crmId);
  const now = new Date(clock.now());
  if (deps.mapping.writeback.followups)
    await claimFollowupGeneration(db, record.callId, crm, now, run?.fence);
  const relinked =
    writes > 0 ? `re-linked to the current match (${writes} link write(s))` : 'nothing written';
  const detail = `found in the CRM: activity ${written.activityId} and ${crmFollowupIds.length} follow-up(s); ${relinked}`;
  const links = lookup ? linksOf(lookup) : undefined;
  const uncertain = await stampedWithoutDrafts(deps, record, written);
  await toWritingBack(deps, record, run);
  await transitionSyncStatus(db, {
    fence: run?.fence,
    callId: record.callId,
    crm,
    to: 'written_back',
    now,
    detail,
    set: {
      writtenBackAt: now,
      crmActivityId: written.activityId,
      crmFollowupIds,
      ...(lookup && links
        ? {
            crmContactId: links.contactId ?? null,
            crmCompanyId: links.companyId ?? null,
            crmDealId: links.dealId ?? null,
            matchDecision: lookup.decision,
          }
        : {}),
      ...(uncertain ? { warnings: mergeWarnings(record.warnings, [uncertain]) } : {}),
    },
    // Drafts stored here (a followup.generated delivery) that the CRM holds are not written again.
    alongside: followupsWrittenUpdate(record.callId, written.followups, now) ?? undefined,
  });
  deps.logger.info({ callId: record.callId, crm }, 'call already written to the CRM; local record caught up');
  // Drafts stored here that the CRM lacks (a followup.generated that joined this job while it was
  // queued) are written by a job of their own, now (draftsJob.ts), when the mapping writes drafts.
  const queued =
    deps.mapping.writeback.followups !== null &&
    (await queueUnwrittenDrafts(db, { callId: record.callId, crm, now }));
  if (queued) {
    deps.logger.info(
      { callId: record.callId, crm },
      'adopted call has drafts not in the CRM; queued their write',
    );
    return `${detail}; drafts not in the CRM queued`;
  }
  return detail;
}

/**
 * The warning for a call adopted on its generation stamp alone: the stamp is written before the
 * Service is asked, so a run that stopped in between (crash, lost lease, database gone before its
 * claim) leaves a stamp with no drafts anywhere and no answer recorded here. It is not asked again
 * (defect 10's rule: the stamp may be all a restored database has), so the call says so.
 */
async function stampedWithoutDrafts(
  deps: LedgerDeps,
  record: SyncStatusRecord,
  written: WrittenCall,
): Promise<string | undefined> {
  if (!deps.mapping.writeback.followups || written.followupsGeneratedAt === undefined) return undefined;
  if (written.followups.length > 0) return undefined;
  const { callId } = record;
  const row = await deps.db.syncStatus.findUnique({
    where: { callId_crm: { callId, crm: deps.crmName } },
    select: { followupsSettledAt: true },
  });
  if (row?.followupsSettledAt) return undefined;
  if ((await deps.db.callFollowup.count({ where: { callId } })) > 0) return undefined;
  return `${FOLLOWUP_UNCERTAIN}: the CRM's activity says follow-ups were asked for at ${written.followupsGeneratedAt}, but no drafts of it are found in the CRM or here and no answer was recorded; not asked again, so drafts come only from followup.generated`;
}

const asError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)));

/** From wherever the call is to writing_back, the table's way (syncPath). */
async function toWritingBack(deps: LedgerDeps, record: SyncStatusRecord, run?: JobRun): Promise<void> {
  await moveTo(deps, record, 'writing_back', 'found written in the CRM', run?.fence);
}
