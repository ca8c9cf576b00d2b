/**
 * call.completed / analysis.ready / followup.generated / poll / backfill: once the call is
 * analysed, write its activity (scores, objections, summary, drafts) to the CRM, exactly once per
 * call and CRM (the adapters upsert on the call id). Jobs come in batches so the CRM writes use
 * its batch APIs; the Service reads happen per call, each paid from the budget. One call's
 * trouble never fails its batch-mates: every step records its error on that call alone.
 */
import { ServiceNotReadyError } from '../service/errors.js';
import type { Analysis, Call } from '../service/types.js';
import { listFollowupDraftsOf, type DraftInput, type FollowupDraftRecord } from '../store/followupRepo.js';
import { endSync } from '../store/syncMoves.js';
import {
  getSyncStatuses,
  upsertDiscovered,
  upsertDiscoveredEach,
  type SyncStatusRecord,
} from '../store/syncStatusRepo.js';
import { noMatchReason } from '../sync/skipReasons.js';
import { callFactsOf } from './callFacts.js';
import { adoptAll, holdsEverything, readLedger, type Adoption, type Ledger } from './crmLedger.js';
import { writeToCrm } from './crmWrite.js';
import type { PipelineDeps } from './deps.js';
import { analysisGiveUpReason, analysisWaitMs } from './analysisWait.js';
import { callPhaseOf, endedReason } from './callStatus.js';
import { moveTo } from './moveTo.js';
import { ANALYSIS_SAFETY_CHECK_MS } from './route.js';
import type { PreparedWrite, WritebackItem, WritebackResult } from './types.js';

type Prepared =
  | { kind: 'result'; result: WritebackResult }
  | ({ kind: 'write' } & PreparedWrite)
  | ({ kind: 'adopt' } & Adoption);

/** Runs a batch of write-back jobs; one result per job id. */
export async function runWritebackBatch(
  deps: PipelineDeps,
  items: WritebackItem[],
): Promise<Map<number, WritebackResult>> {
  const results = new Map<number, WritebackResult>();
  // The batch's rows and drafts as its work starts (the CRM write reads them again, after this
  // work changed them); then what the CRM holds for the calls this database has no record of
  // writing, before anything is generated or written for them.
  const callIds = items.map((i) => i.payload.callId);
  const statuses = await getSyncStatuses(deps.db, callIds, deps.crmName);
  // Drafts are stored before a job for them is queued (the inbox), or by the job itself.
  const drafts = await listFollowupDraftsOf(deps.db, callIds);
  const ledger = await readLedger(deps, callIds, statuses);
  // One batch lookup for the participants the payloads already name (list pages, events); calls
  // the CRM already holds whole need theirs too, to check the links they are adopted with.
  const known = items.flatMap((i) => {
    const p = i.payload.call?.participant;
    if (!p?.email) return [];
    return [{ email: p.email, name: p.name ?? undefined, company: p.company ?? undefined }];
  });
  if (known.length > 1) await deps.lookups.prefetch(known);
  const stored = new Map(
    items.map((item) => {
      const { callId } = item.payload;
      const row = { status: statuses.get(callId) ?? null, drafts: drafts.get(callId) ?? [] };
      return [item.jobId, { ...row, start: startOf(deps, item, row) }] as const;
    }),
  );
  const upserted = await upsertCarried(deps, items, stored);
  const prepared = await Promise.all(
    items.map((item) =>
      prepare(deps, item, ledger, { ...stored.get(item.jobId)!, upserted: upserted.get(item.jobId) }).catch(
        (error: unknown): Prepared => ({ kind: 'result', result: { kind: 'error', error } }),
      ),
    ),
  );
  const writes: PreparedWrite[] = [];
  const adoptions: Adoption[] = [];
  items.forEach((item, i) => {
    const p = prepared[i]!;
    if (p.kind === 'result') results.set(item.jobId, p.result);
    else if (p.kind === 'adopt') adoptions.push(p);
    else writes.push(p);
  });
  for (const [jobId, adopted] of await adoptAll(deps, adoptions)) {
    results.set(
      jobId,
      adopted instanceof Error ? { kind: 'error', error: adopted } : { kind: 'done', detail: adopted },
    );
  }
  if (writes.length > 0) await writeToCrm(deps, writes, results);
  return results;
}

interface Stored {
  /** The call's row and its stored drafts, as the batch read them. */
  status: SyncStatusRecord | null;
  drafts: FollowupDraftRecord[];
  start: Start;
}

/** What the batch's read of a call decides before any request: nothing to do, or what to prepare. */
type Start = { done: string } | { followupsOnly: boolean };

function startOf(
  deps: Pick<PipelineDeps, 'mapping'>,
  item: WritebackItem,
  stored: Omit<Stored, 'start'>,
): Start {
  const { status } = stored;
  // A followup.generated job's draft (payload.followup) was stored by the inbox, in the
  // transaction that queued the job.
  const replay = item.payload.reason === 'replay';
  if (status?.state === 'written_back') {
    const pending = stored.drafts.filter((d) => d.crmId === null);
    if (!replay && (pending.length === 0 || !deps.mapping.writeback.followups))
      return { done: 'already written back' };
    return { followupsOnly: !replay };
  }
  if (status && (status.state === 'failed' || status.state === 'skipped') && !replay) {
    return { done: `call is ${status.state}; replay to retry` };
  }
  return { followupsOnly: false };
}

/**
 * The event's or list page's copy of the call is enough when it says analysed or ended (failed,
 * cancelled: a call does not come back from those); else it is read fresh.
 */
function settledCopy(item: WritebackItem): Call | undefined {
  const carried = item.payload.call;
  return carried && ['analyzed', 'ended'].includes(callPhaseOf(carried.status)) ? carried : undefined;
}

/**
 * The rows of the batch's calls whose settled copy came with the job (the backfill's case), upserted
 * in one statement, by job id; a call the database refuses gets its error (upsertDiscoveredEach).
 */
async function upsertCarried(
  deps: PipelineDeps,
  items: WritebackItem[],
  stored: Map<number, Stored>,
): Promise<Map<number, Upserted | Error>> {
  // The statement locks the rows in call id order (CALL_ID_ORDER), whatever the batch's order.
  const carried = items.flatMap((item) => {
    const call = settledCopy(item);
    return call && !('done' in stored.get(item.jobId)!.start) ? [{ item, call }] : [];
  });
  if (carried.length < 2) return new Map();
  const now = new Date(deps.clock.now());
  const rows = await upsertDiscoveredEach(
    deps.db,
    deps.crmName,
    carried.map(({ item, call }) => ({ callId: item.payload.callId, call: callFactsOf(call), now })),
  );
  return new Map(carried.map(({ item }, i) => [item.jobId, rows[i]!]));
}

type Upserted = Awaited<ReturnType<typeof upsertDiscovered>>;

async function prepare(
  deps: PipelineDeps,
  item: WritebackItem,
  ledger: Ledger,
  stored: Stored & { upserted: Upserted | Error | undefined },
): Promise<Prepared> {
  const { db, crmName: crm, clock } = deps;
  const { callId } = item.payload;
  // Reads stop as soon as the run is told to (they change nothing): no waiting for a slot in vain.
  const opts = { priority: item.priority, signal: item.run?.signal };
  const now = () => new Date(clock.now());
  if ('done' in stored.start) return done(stored.start.done);
  const { followupsOnly } = stored.start;

  if (stored.upserted instanceof Error) throw stored.upserted;
  const call = settledCopy(item) ?? (await deps.service.getCall(callId, opts));
  const { record } =
    stored.upserted ?? (await upsertDiscovered(db, { callId, crm, call: callFactsOf(call), now: now() }));
  const written = ledger.get(callId);
  if (written instanceof Error) throw written;
  // Adopted with the batch's others (adoptAll), once their links are checked.
  if (written && holdsEverything(deps.mapping, written)) {
    return { kind: 'adopt', jobId: item.jobId, record, call, written, run: item.run };
  }

  if (callPhaseOf(call.status) === 'ended')
    return settle(deps, item, record, 'skipped', endedReason(call.status));
  if (call.status !== 'analyzed') {
    return waitForAnalysis(deps, item, record, call, `call is ${call.status}`, ANALYSIS_SAFETY_CHECK_MS);
  }
  let analysis: Analysis;
  try {
    analysis = await deps.service.getAnalysis(callId, opts);
  } catch (err) {
    if (!(err instanceof ServiceNotReadyError)) throw err;
    return waitForAnalysis(deps, item, record, call, 'analysis not ready', 60_000);
  }

  const email = call.participant?.email;
  if (!email) return settle(deps, item, record, 'skipped', 'the call has no participant email');
  const lookup = await deps.lookups.get({
    email,
    name: call.participant?.name ?? undefined,
    company: call.participant?.company ?? undefined,
  });
  if (lookup.matchedBy === 'none' || (!lookup.contact && !lookup.company)) {
    return settle(deps, item, record, 'skipped', noMatchReason(email));
  }

  const drafts = stored.drafts.map((d) => d.raw as DraftInput);
  // Asked for after the activity is written with the generation stamp (crmWrite.ts).
  const generate =
    drafts.length === 0 && deps.mapping.writeback.followups
      ? { email, claimed: record.followupsRequestedAt !== null }
      : undefined;
  return {
    kind: 'write',
    item,
    callId,
    call,
    analysis,
    lookup,
    drafts,
    generate,
    followupsOnly,
    warnings: [],
  };
}

/**
 * Not analysed yet: wait, less often the older the call is (each check costs a Service request),
 * and give up after ANALYSIS_GIVE_UP_MS so a call the Service never analyses stops costing budget.
 */
async function waitForAnalysis(
  deps: PipelineDeps,
  item: WritebackItem,
  record: SyncStatusRecord,
  call: Call,
  why: string,
  floorMs: number,
): Promise<Prepared> {
  const created = Date.parse(call.created_at);
  const age = Number.isNaN(created) ? 0 : deps.clock.now() - created;
  const giveUp = analysisGiveUpReason({
    ageMs: age,
    seenForMs: deps.clock.now() - record.createdAt.getTime(),
    why,
  });
  if (giveUp) return settle(deps, item, record, 'failed', giveUp, 'SERVICE_NOT_READY');
  await moveTo(deps, record, 'awaiting_analysis', why, item.run?.fence);
  return later(analysisWaitMs(age, floorMs), `${why}; waiting for its analysis`);
}

/** Ends the call's work as skipped or failed (endSync: a call already at an end keeps it). */
async function settle(
  deps: PipelineDeps,
  item: WritebackItem,
  record: SyncStatusRecord,
  to: 'skipped' | 'failed',
  detail: string,
  code = 'SKIPPED',
): Promise<Prepared> {
  const now = new Date(deps.clock.now());
  await endSync(deps.db, {
    callId: record.callId,
    crm: deps.crmName,
    from: record.state,
    to,
    code,
    message: detail,
    now,
    fence: item.run?.fence,
  });
  return done(detail);
}

const done = (detail: string): Prepared => ({ kind: 'result', result: { kind: 'done', detail } });
const later = (delayMs: number, detail: string): Prepared => ({
  kind: 'result',
  result: { kind: 'later', delayMs, detail },
});
