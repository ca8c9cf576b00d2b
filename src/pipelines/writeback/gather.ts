/**
 * The write-back's first step: what the batch needs to decide (decide.ts). Once per batch, the
 * calls' rows, their stored drafts and what the CRM holds for the calls this database has no
 * record of writing (crmLedger.ts); then, per call, only the facts its decision asks for, in that
 * order: the call (and its facts recorded on its row), its analysis, the participant's lookup.
 */
import { ServiceNotReadyError } from '../../service/errors.js';
import type { Call } from '../../service/types.js';
import { listFollowupDraftsOf, type FollowupDraftRecord } from '../../store/followupRepo.js';
import { upsertDiscovered, upsertDiscoveredEach } from '../../store/syncStatus/discovered.js';
import { getSyncStatuses } from '../../store/syncStatus/queries.js';
import type { SyncStatusRecord } from '../../store/syncStatus/row.js';
import { callFactsOf } from '../callFacts.js';
import { callPhaseOf } from '../callStatus.js';
import { readLedger, type Ledger } from '../crmLedger.js';
import type { PipelineDeps } from '../deps.js';
import type { WritebackItem } from '../types.js';
import { ANALYSIS_NOT_READY, decideWriteback, type Decision, type WritebackFacts } from './decide.js';

/** The facts of one call, its row whole (the one its call facts were recorded on). */
export type GatheredFacts = Omit<WritebackFacts, 'record'> & {
  record?: SyncStatusRecord | Error | undefined;
};

/** One call as gathered and decided. */
export interface Gathered {
  item: WritebackItem;
  facts: GatheredFacts;
  decision: Exclude<Decision, { kind: 'need' }>;
}

type Upserted = Awaited<ReturnType<typeof upsertDiscovered>>;

/** What the batch reads once, before any call's own request. */
export interface BatchRead {
  statuses: Map<string, SyncStatusRecord>;
  drafts: Map<string, FollowupDraftRecord[]>;
  ledger: Ledger;
  /** Rows of calls whose settled copy came with the job, upserted together (upsertCarried). */
  upserted: Map<number, Upserted | Error>;
}

export async function readBatch(deps: PipelineDeps, items: WritebackItem[]): Promise<BatchRead> {
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
  const read = { statuses, drafts, ledger, upserted: new Map<number, Upserted | Error>() };
  read.upserted = await upsertCarried(deps, items, read);
  return read;
}

/** The facts the batch read holds for `item`, before any request of its own. */
export function batchFacts(item: WritebackItem, read: BatchRead): GatheredFacts {
  const { callId } = item.payload;
  return {
    replay: item.payload.reason === 'replay',
    status: read.statuses.get(callId) ?? null,
    drafts: read.drafts.get(callId) ?? [],
  };
}

/**
 * Gathers what the call's decision asks for until it decides. A request that fails (the Service,
 * the CRM lookup, the database) throws: that call's error alone.
 */
export async function gatherCall(
  deps: PipelineDeps,
  item: WritebackItem,
  read: BatchRead,
): Promise<Gathered> {
  const { callId } = item.payload;
  const ctx = () => ({ mapping: deps.mapping, now: deps.clock.now() });
  // Reads stop as soon as the run is told to (they change nothing): no waiting for a slot in vain.
  const opts = { priority: item.priority, signal: item.run?.signal };
  const facts = batchFacts(item, read);
  for (let decision = decideWriteback(facts, ctx()); ; decision = decideWriteback(facts, ctx())) {
    if (decision.kind !== 'need') return { item, facts, decision };
    if (decision.what === 'call') {
      const upserted = read.upserted.get(item.jobId);
      if (upserted instanceof Error) {
        facts.record = upserted;
        continue;
      }
      const call = settledCopy(item) ?? (await deps.service.getCall(callId, opts));
      const now = new Date(deps.clock.now());
      const { record } =
        upserted ??
        (await upsertDiscovered(deps.db, { callId, crm: deps.crmName, call: callFactsOf(call), now }));
      Object.assign(facts, { call, record, ledger: read.ledger.get(callId) });
    } else if (decision.what === 'analysis') {
      facts.analysis = await deps.service.getAnalysis(callId, opts).catch((err: unknown) => {
        if (err instanceof ServiceNotReadyError) return ANALYSIS_NOT_READY;
        throw err;
      });
    } else {
      const p = facts.call!.participant!;
      facts.lookup = await deps.lookups.get({
        email: p.email!,
        name: p.name ?? undefined,
        company: p.company ?? undefined,
      });
    }
  }
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
  read: Omit<BatchRead, 'upserted'>,
): Promise<Map<number, Upserted | Error>> {
  // The statement locks the rows in call id order (CALL_ID_ORDER), whatever the batch's order.
  const carried = items.flatMap((item) => {
    const call = settledCopy(item);
    const start = decideWriteback(batchFacts(item, { ...read, upserted: new Map() }), {
      mapping: deps.mapping,
      now: deps.clock.now(),
    });
    // Only calls with work to do: a call the batch read settles asks for nothing.
    return call && start.kind === 'need' ? [{ item, call }] : [];
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
