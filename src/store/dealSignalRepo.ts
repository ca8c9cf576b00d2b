/**
 * The deal-level signals' store: each deal's synced calls (deal_call) and, per deal, the newest
 * call seen and the ledger of what was last written to the CRM (deal_signal). A deal is due a
 * write while its newest call is not the one its last write covered; only a newer call moves the
 * newest, so a call replayed or delivered late never makes a deal due (src/deals/aggregate.ts).
 */
import type { CrmName } from '../crm/types.js';
import type { DealCallFacts } from '../deals/aggregate.js';
import { inTransaction, type Db } from './database.js';

/** A deal claimed for writing: the newest call it had when claimed, and what was last written. */
export interface ClaimedDeal {
  dealId: string;
  newestCallId: string;
  writtenValues: Record<string, unknown> | null;
  /** A process claimed it before and died mid-write: the CRM may hold the values already. */
  recovered: boolean;
}

export interface DealLedgerRow {
  dealId: string;
  newestCallId: string;
  writtenCallId: string | null;
  writtenValues: Record<string, unknown> | null;
  writtenAt: Date | null;
  lastError: string | null;
}

/**
 * Records a synced call on its deal; returns whether it is now the deal's newest call (the deal is
 * then due a write). Recording the same call again only refreshes its facts.
 */
export async function recordDealCall(
  db: Db,
  input: { crm: CrmName; dealId: string; facts: DealCallFacts; now: Date },
): Promise<boolean> {
  const { crm, dealId, facts, now } = input;
  const startedAt = new Date(facts.startedAt);
  return inTransaction(db, async (tx) => {
    await tx.dealCall.upsert({
      where: { crm_callId: { crm, callId: facts.callId } },
      create: { crm, callId: facts.callId, dealId, ...factColumns(facts), recordedAt: now },
      update: { dealId, ...factColumns(facts), recordedAt: now },
    });
    // The row comparison keeps the newest by (start, call id) whatever order calls arrive in, and
    // is one statement, so two processes recording calls of one deal cannot both win.
    const moved = await tx.$executeRaw`
      INSERT INTO deal_signal (crm, deal_id, newest_call_id, newest_started_at, updated_at)
      VALUES (${crm}, ${dealId}, ${facts.callId}, ${startedAt}, ${now})
      ON CONFLICT (crm, deal_id) DO UPDATE
        SET newest_call_id = EXCLUDED.newest_call_id,
            newest_started_at = EXCLUDED.newest_started_at,
            updated_at = EXCLUDED.updated_at
        WHERE (deal_signal.newest_started_at, deal_signal.newest_call_id)
            < (EXCLUDED.newest_started_at, EXCLUDED.newest_call_id)`;
    return moved > 0;
  });
}

function factColumns(facts: DealCallFacts) {
  return {
    startedAt: new Date(facts.startedAt),
    overallScore: facts.overallScore,
    objectionsDetected: facts.objectionsDetected,
    objectionsHandled: facts.objectionsHandled,
    nextSteps: facts.nextSteps,
  };
}

/**
 * Claims up to `limit` deals due a write and not claimed by another process (or whose claim ran
 * out: that process died mid-write, and `recovered` says so), until `until`.
 */
export async function claimDueDeals(
  db: Db,
  input: { crm: CrmName; now: Date; until: Date; limit: number },
): Promise<ClaimedDeal[]> {
  const rows = await db.$queryRaw<
    {
      deal_id: string;
      newest_call_id: string;
      written_values: Record<string, unknown> | null;
      previous_claim: Date | null;
    }[]
  >`
    WITH due AS (
      SELECT deal_id, claimed_until AS previous_claim FROM deal_signal
      WHERE crm = ${input.crm}
        AND newest_call_id IS DISTINCT FROM written_call_id
        AND (claimed_until IS NULL OR claimed_until < ${input.now})
      ORDER BY newest_started_at
      LIMIT ${input.limit}
      FOR UPDATE SKIP LOCKED)
    UPDATE deal_signal d SET claimed_until = ${input.until}
    FROM due
    WHERE d.crm = ${input.crm} AND d.deal_id = due.deal_id
    RETURNING d.deal_id, d.newest_call_id, d.written_values, due.previous_claim`;
  return rows.map((r) => ({
    dealId: r.deal_id,
    newestCallId: r.newest_call_id,
    writtenValues: r.written_values,
    recovered: r.previous_claim !== null,
  }));
}

/** Every call recorded on a deal. */
export async function listDealCalls(db: Db, crm: CrmName, dealId: string): Promise<DealCallFacts[]> {
  const rows = await db.dealCall.findMany({ where: { crm, dealId } });
  return rows.map((r) => ({
    callId: r.callId,
    startedAt: r.startedAt.getTime(),
    overallScore: r.overallScore,
    objectionsDetected: r.objectionsDetected,
    objectionsHandled: r.objectionsHandled,
    nextSteps: r.nextSteps,
  }));
}

/**
 * Ends a claim: the deal's write covered `callId` (written, found unchanged, or refused for good),
 * so it is not due again until a newer call arrives. `values` replaces the ledger's when given.
 */
export async function settleDeal(
  db: Db,
  input: {
    crm: CrmName;
    dealId: string;
    callId: string;
    values?: Record<string, unknown> | undefined;
    error?: string | undefined;
    now: Date;
  },
): Promise<void> {
  await db.dealSignal.update({
    where: { crm_dealId: { crm: input.crm, dealId: input.dealId } },
    data: {
      writtenCallId: input.callId,
      ...(input.values ? { writtenValues: input.values as object, writtenAt: input.now } : {}),
      claimedUntil: null,
      lastError: input.error ?? null,
      updatedAt: input.now,
    },
  });
}

/** Ends a claim without a write (a failure worth retrying): the deal stays due. */
export async function releaseDeal(
  db: Db,
  input: { crm: CrmName; dealId: string; error: string; now: Date },
): Promise<void> {
  await db.dealSignal.update({
    where: { crm_dealId: { crm: input.crm, dealId: input.dealId } },
    data: { claimedUntil: null, lastError: input.error, updatedAt: input.now },
  });
}

/** One deal's ledger row, for status and tests. */
export async function getDealLedger(db: Db, crm: CrmName, dealId: string): Promise<DealLedgerRow | null> {
  const r = await db.dealSignal.findUnique({ where: { crm_dealId: { crm, dealId } } });
  if (!r) return null;
  return {
    dealId: r.dealId,
    newestCallId: r.newestCallId,
    writtenCallId: r.writtenCallId,
    writtenValues: r.writtenValues as Record<string, unknown> | null,
    writtenAt: r.writtenAt,
    lastError: r.lastError,
  };
}
