/**
 * Deal-level signals, after a write-back batch: each written call is recorded on its deal, and the
 * deals a newer call made due are written in one batch update, each exactly once per change (the
 * deal_signal ledger); nothing here fails a call's write-back. docs/mappings.md, "Deal signals".
 */
import { CrmAuthError, CrmError } from '../crm/errors.js';
import type { DealWrite, WriteResult } from '../crm/types.js';
import { writeObject } from '../crm/fieldGaps.js';
import { dealCallFacts, newestFirst } from '../deals/aggregate.js';
import { showsValues } from '../deals/compare.js';
import { buildDealWrite, dealTarget } from '../mapping/index.js';
import type { Analysis, Call } from '../service/types.js';
import {
  claimDueDeals,
  listDealCalls,
  recordDealCalls,
  releaseDeal,
  settleDeals,
  type ClaimedDeal,
  type Settled,
} from '../store/dealSignalRepo.js';
import type { PipelineDeps } from './deps.js';
import { writeAroundGaps } from './fieldGaps.js';

/** HubSpot batch update and Salesforce collections both take at least this many records. */
const DEALS_PER_ROUND = 100;
/** A process that dies mid-write leaves its claim; another process takes the deal after this. */
const CLAIM_MS = 5 * 60_000;
/** Rounds per flush, so one batch's hook cannot run on without end. */
const MAX_ROUNDS = 5;

export type DealDeps = Pick<
  PipelineDeps,
  'db' | 'crmName' | 'crm' | 'mapping' | 'clock' | 'logger' | 'metrics'
>;

/** A call whose activity is in the CRM, with the deal it was written on. */
export interface CallOnDeal {
  call: Call;
  analysis: Analysis | null;
  dealId: string | undefined;
}

/** Records the calls on their deals, then writes the deals that are due. Never throws. */
export async function syncDealSignals(deps: DealDeps, written: CallOnDeal[]): Promise<void> {
  if (!dealTarget(deps.mapping)) return;
  try {
    const calls = written.flatMap((w) => {
      const facts = dealCallFacts(w.call, w.analysis);
      return w.dealId && facts ? [{ dealId: w.dealId, facts }] : [];
    });
    await recordDealCalls(deps.db, { crm: deps.crmName, calls, now: new Date(deps.clock.now()) });
  } catch (err) {
    deps.logger.warn({ err: (err as Error).message }, 'calls not recorded on their deals');
  }
  await flushDealsQuietly(deps);
}

/** flushDueDeals that logs a failure instead of throwing: the deals stay due for the next try. */
export async function flushDealsQuietly(deps: DealDeps): Promise<void> {
  try {
    await flushDueDeals(deps);
  } catch (err) {
    deps.logger.warn({ err: (err as Error).message }, 'deal signals not written; the deals stay due');
  }
}

/** Writes every deal that is due, a batch per round; returns how many deals the CRM was sent. */
export async function flushDueDeals(deps: DealDeps): Promise<number> {
  if (!dealTarget(deps.mapping)) return 0;
  let sent = 0;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const nowMs = deps.clock.now();
    const claimed = await claimDueDeals(deps.db, {
      crm: deps.crmName,
      now: new Date(nowMs),
      until: new Date(nowMs + CLAIM_MS),
      limit: DEALS_PER_ROUND,
    });
    if (claimed.length === 0) break;
    sent += await writeRound(deps, claimed);
    if (claimed.length < DEALS_PER_ROUND) break;
  }
  return sent;
}

interface Planned {
  deal: ClaimedDeal;
  /** The newest call the values cover. */
  callId: string;
  write: DealWrite;
}

async function writeRound(deps: DealDeps, claimed: ClaimedDeal[]): Promise<number> {
  const { db, crmName: crm } = deps;
  const settled: Settled[] = [];
  let planned: Planned[] = [];
  const callsOf = await listDealCalls(
    db,
    crm,
    claimed.map((d) => d.dealId),
  );
  for (const deal of claimed) {
    const calls = callsOf.get(deal.dealId) ?? [];
    const callId = newestFirst(calls)[0]?.callId ?? deal.newestCallId;
    try {
      const warnings: string[] = [];
      const write = await buildDealWrite(deps.mapping, {
        dealId: deal.dealId,
        calls,
        now: deps.clock.now(),
        warnings,
      });
      if (warnings.length > 0) deps.logger.warn({ dealId: deal.dealId, warnings }, 'deal field left out');
      // Nothing the deal shows would change: the newer call is covered without a request.
      if (deal.writtenValues && showsValues(deal.writtenValues, write.properties)) {
        settled.push({ dealId: deal.dealId, callId });
      } else {
        planned.push({ deal, callId, write });
      }
    } catch (err) {
      // A mapping that fails on this deal fails the same way on a retry: settled, with the reason.
      const error = (err as Error).message;
      settled.push({ dealId: deal.dealId, callId, error });
      deps.logger.warn({ dealId: deal.dealId, err: error }, 'deal signals could not be mapped');
    }
  }
  const adopted = await adoptRecovered(deps, planned);
  planned = adopted.rest;
  settled.push(...adopted.settled);
  const adoptedIds = new Set(adopted.settled.map((d) => d.dealId));
  const results = planned.length > 0 ? await updateAll(deps, planned) : new Map<string, WriteResult>();
  for (const p of planned) {
    const dealId = p.write.dealId;
    const result = results.get(dealId);
    if (result?.ok) {
      settled.push({ dealId, callId: p.callId, values: p.write.properties });
      continue;
    }
    const error = result ? result.error : new Error(`no result for deal ${dealId}`);
    deps.logger.warn({ dealId, err: error.message }, 'deal signals not written');
    if (error instanceof CrmError && !error.retryable && !(error instanceof CrmAuthError)) {
      // Refused (the deal is gone, a field is missing): retrying the same write would be refused
      // again, so the deal waits for its next newer call. `doctor` shows a missing field.
      settled.push({ dealId, callId: p.callId, error: error.message });
    } else {
      await releaseDeal(db, { crm, dealId, error: error.message, now: new Date(deps.clock.now()) });
      deps.metrics.dealSignalWrites.inc({ outcome: 'retry' });
    }
  }
  await settleDeals(db, { crm, deals: settled, now: new Date(deps.clock.now()) });
  for (const d of settled) {
    const outcome = d.error ? 'refused' : d.values && !adoptedIds.has(d.dealId) ? 'written' : 'unchanged';
    deps.metrics.dealSignalWrites.inc({ outcome });
  }
  return planned.length;
}

/**
 * One batch update, leaving out the fields the CRM lacks (fieldGaps.ts: the gap stands in status
 * and doctor); a whole-request failure is every deal's result.
 */
async function updateAll(deps: DealDeps, planned: Planned[]): Promise<Map<string, WriteResult>> {
  const object = writeObject(deps.crmName, 'deal');
  try {
    const writes = planned.map((p) => p.write);
    return (
      await writeAroundGaps(deps, writes, {
        keyOf: (w) => w.dealId,
        objectOf: () => object,
        send: (batch) => deps.crm.updateDeals(batch),
      })
    ).results;
  } catch (err) {
    const error = err instanceof Error ? err : new Error(String(err));
    return new Map(planned.map((p) => [p.write.dealId, { key: p.write.dealId, ok: false, error }]));
  }
}

/**
 * A deal whose last claimant died mid-write may already show the values: the CRM is asked (one
 * batched read), and a deal that does is settled without writing it again.
 */
async function adoptRecovered(
  deps: DealDeps,
  planned: Planned[],
): Promise<{ rest: Planned[]; settled: Settled[] }> {
  const recovered = planned.filter((p) => p.deal.recovered);
  if (recovered.length === 0) return { rest: planned, settled: [] };
  let shown: Map<string, Record<string, unknown>>;
  try {
    const fields = [...new Set(recovered.flatMap((p) => Object.keys(p.write.properties)))];
    shown = await deps.crm.readDeals(
      recovered.map((p) => p.write.dealId),
      fields,
    );
  } catch {
    return { rest: planned, settled: [] }; // Not knowing, the write goes out: the same values again.
  }
  const rest: Planned[] = [];
  const settled: Settled[] = [];
  for (const p of planned) {
    const current = p.deal.recovered ? shown.get(p.write.dealId) : undefined;
    if (current && showsValues(current, p.write.properties)) {
      settled.push({ dealId: p.write.dealId, callId: p.callId, values: p.write.properties });
    } else {
      rest.push(p);
    }
  }
  return { rest, settled };
}
