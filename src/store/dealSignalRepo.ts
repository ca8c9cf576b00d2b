/**
 * The deal-level signals' store: each deal's synced calls (deal_call) and, per deal, the newest
 * call seen and the ledger of what was last written to the CRM (deal_signal). A deal is due a
 * write while its newest call is not the one its last write covered; only a newer call moves the
 * newest, so a call replayed or delivered late never makes a deal due (src/deals/aggregate.ts).
 * Each function is a fixed number of statements per batch: this runs in the write-back's path.
 */
import type { CrmName } from '../crm/types.js';
import { isNewer, type DealCallFacts } from '../deals/aggregate.js';
import { Prisma } from '../generated/prisma/client.js';
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

/** What orders a call among its deal's calls. */
type CallStart = Pick<DealCallFacts, 'callId' | 'startedAt'>;

export interface CallOnDealFacts {
  dealId: string;
  facts: DealCallFacts;
}

/**
 * Records synced calls on their deals, in one transaction of three statements whatever the batch
 * size (the write-back hot path). Recording a call again only refreshes its facts; a deal's newest
 * call moves only to a newer one, so a late or replayed call never makes its deal due.
 */
export async function recordDealCalls(
  db: Db,
  input: { crm: CrmName; calls: CallOnDealFacts[]; now: Date },
): Promise<void> {
  const { crm, now } = input;
  // One row per call (the last copy wins), and per deal only its newest call of this batch: a
  // multi-row upsert may not touch one row twice.
  // Rows in one order (calls by id, deals by id) so that two batches sharing calls or deals wait
  // for each other rather than deadlock.
  const calls = [...new Map(input.calls.map((c) => [c.facts.callId, c])).values()].sort((a, b) =>
    byId(a.facts.callId, b.facts.callId),
  );
  if (calls.length === 0) return;
  const newest = new Map<string, DealCallFacts>();
  for (const { dealId, facts } of calls) {
    const held = newest.get(dealId);
    if (!held || isNewer(facts, held)) newest.set(dealId, facts);
  }
  await inTransaction(db, async (tx) => {
    // A call written again on another deal (its deal closed, the rule changed) leaves the old one.
    const moves = calls.map(({ dealId, facts }) => ({ callId: facts.callId, dealId }));
    await moveDealCalls(tx, { crm, moves, now });
    await tx.$executeRaw`
      INSERT INTO deal_call (crm, call_id, deal_id, started_at, overall_score, objections_detected,
                             objections_handled, next_steps, recorded_at)
      VALUES ${Prisma.join(
        calls.map(
          ({ dealId, facts: f }) => Prisma.sql`(${crm}, ${f.callId}, ${dealId}, ${new Date(f.startedAt)},
            ${f.overallScore}::float8, ${f.objectionsDetected}::int, ${f.objectionsHandled}::int,
            ${f.nextSteps}::text[], ${now})`,
        ),
      )}
      ON CONFLICT (crm, call_id) DO UPDATE SET
        deal_id = EXCLUDED.deal_id, started_at = EXCLUDED.started_at,
        overall_score = EXCLUDED.overall_score, objections_detected = EXCLUDED.objections_detected,
        objections_handled = EXCLUDED.objections_handled, next_steps = EXCLUDED.next_steps,
        recorded_at = EXCLUDED.recorded_at`;
    await advanceNewest(tx, crm, newest, now);
  });
}

const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Moves each deal's newest call to the given one when it is newer. The row comparison keeps the
 * newest by (start, call id) whatever order calls arrive in, and is one statement, so two
 * processes recording calls of one deal cannot both win. Ids compare byte-wise (COLLATE "C"), as
 * isNewer compares them, whatever the database's collation.
 */
async function advanceNewest(
  tx: Prisma.TransactionClient,
  crm: CrmName,
  newest: Map<string, CallStart>,
  now: Date,
): Promise<void> {
  if (newest.size === 0) return;
  await tx.$executeRaw`
    INSERT INTO deal_signal (crm, deal_id, newest_call_id, newest_started_at, updated_at)
    VALUES ${Prisma.join(
      [...newest]
        .sort(([a], [b]) => byId(a, b))
        .map(([dealId, f]) => Prisma.sql`(${crm}, ${dealId}, ${f.callId}, ${new Date(f.startedAt)}, ${now})`),
    )}
    ON CONFLICT (crm, deal_id) DO UPDATE
      SET newest_call_id = EXCLUDED.newest_call_id,
          newest_started_at = EXCLUDED.newest_started_at,
          updated_at = EXCLUDED.updated_at
      WHERE (deal_signal.newest_started_at, deal_signal.newest_call_id COLLATE "C")
          < (EXCLUDED.newest_started_at, EXCLUDED.newest_call_id COLLATE "C")`;
}

/**
 * Calls that `rematch` moved to another deal (or to none): each leaves its old deal and joins its
 * new one, and both deals become due, since the calls they add up changed. The old deal's newest
 * call is worked out again from the calls it keeps; a deal left with none gets its fields cleared
 * by its next write.
 */
export async function moveDealCalls(
  db: Db,
  input: { crm: CrmName; moves: { callId: string; dealId: string | null }[]; now: Date },
): Promise<void> {
  const { crm, now } = input;
  if (input.moves.length === 0) return;
  const to = new Map(input.moves.map((m) => [m.callId, m.dealId]));
  await inTransaction(db, async (tx) => {
    const rows = await tx.dealCall.findMany({ where: { crm, callId: { in: [...to.keys()] } } });
    const moved = rows.filter((r) => r.dealId !== to.get(r.callId));
    if (moved.length === 0) return;
    const joined = new Map<string, CallStart>();
    for (const r of moved) {
      const dealId = to.get(r.callId) ?? null;
      if (dealId === null) {
        await tx.dealCall.delete({ where: { crm_callId: { crm, callId: r.callId } } });
        continue;
      }
      await tx.dealCall.update({ where: { crm_callId: { crm, callId: r.callId } }, data: { dealId } });
      const facts = { callId: r.callId, startedAt: r.startedAt.getTime() };
      const held = joined.get(dealId);
      if (!held || isNewer(facts, held)) joined.set(dealId, facts);
    }
    await advanceNewest(tx, crm, joined, now);
    const left = [...new Set(moved.map((r) => r.dealId))];
    // The newest call the old deal keeps (it stays as it was when it keeps none).
    await tx.$executeRaw`
      UPDATE deal_signal s SET newest_call_id = n.call_id, newest_started_at = n.started_at
      FROM (
        SELECT DISTINCT ON (deal_id) deal_id, call_id, started_at FROM deal_call
        WHERE crm = ${crm} AND deal_id IN (${Prisma.join(left)})
        ORDER BY deal_id, started_at DESC, call_id COLLATE "C" DESC) n
      WHERE s.crm = ${crm} AND s.deal_id = n.deal_id`;
    const due = [...new Set([...left, ...joined.keys()])];
    await tx.$executeRaw`
      UPDATE deal_signal SET written_call_id = NULL, updated_at = ${now}
      WHERE crm = ${crm} AND deal_id IN (${Prisma.join(due)})`;
  });
}

/** recordDealCalls for one call. */
export function recordDealCall(
  db: Db,
  input: { crm: CrmName; dealId: string; facts: DealCallFacts; now: Date },
): Promise<void> {
  return recordDealCalls(db, { crm: input.crm, calls: [input], now: input.now });
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

/** Every call recorded on each of these deals, by deal id (one query). */
export async function listDealCalls(
  db: Db,
  crm: CrmName,
  dealIds: string[],
): Promise<Map<string, DealCallFacts[]>> {
  const out = new Map<string, DealCallFacts[]>(dealIds.map((id) => [id, []]));
  if (dealIds.length === 0) return out;
  const rows = await db.dealCall.findMany({ where: { crm, dealId: { in: dealIds } } });
  for (const r of rows) {
    out.get(r.dealId)?.push({
      callId: r.callId,
      startedAt: r.startedAt.getTime(),
      overallScore: r.overallScore,
      objectionsDetected: r.objectionsDetected,
      objectionsHandled: r.objectionsHandled,
      nextSteps: r.nextSteps,
    });
  }
  return out;
}

/**
 * How a claim ends when the deal's write covered `callId` (written, found unchanged, or refused
 * for good): it is not due again until a newer call arrives. `values` replaces the ledger's.
 */
export interface Settled {
  dealId: string;
  callId: string;
  values?: Record<string, unknown> | undefined;
  error?: string | undefined;
}

/** Ends these claims in one statement. */
export async function settleDeals(
  db: Db,
  input: { crm: CrmName; deals: Settled[]; now: Date },
): Promise<void> {
  if (input.deals.length === 0) return;
  const { crm, now } = input;
  const rows = input.deals.map(
    (d) => Prisma.sql`(${d.dealId}::text, ${d.callId}::text,
      ${d.values ? JSON.stringify(d.values) : null}::jsonb, ${d.error ?? null}::text)`,
  );
  await db.$executeRaw`
    UPDATE deal_signal d SET
      written_call_id = v.call_id,
      written_values = COALESCE(v.vals, d.written_values),
      written_at = CASE WHEN v.vals IS NULL THEN d.written_at ELSE ${now} END,
      claimed_until = NULL,
      last_error = v.err,
      updated_at = ${now}
    FROM (VALUES ${Prisma.join(rows)}) AS v(deal_id, call_id, vals, err)
    WHERE d.crm = ${crm} AND d.deal_id = v.deal_id`;
}

/** settleDeals for one deal. */
export function settleDeal(db: Db, input: Settled & { crm: CrmName; now: Date }): Promise<void> {
  return settleDeals(db, { crm: input.crm, deals: [input], now: input.now });
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

/**
 * Whether a call's deal signals reached the CRM, for `status --call` and the console: `written`
 * when the deal's last write covered this call (it, or a newer call of the deal, was the newest
 * then), `refused` when the CRM refused that write for good, else `due` (`lastError` says why the
 * last try failed, if it did). Null when the call is on no deal here (no deal matched, the deal
 * section is off, or it was written before deal signals existed).
 */
export interface CallDealSignals {
  dealId: string;
  state: 'written' | 'refused' | 'due';
  writtenCallId: string | null;
  writtenAt: Date | null;
  lastError: string | null;
}

export async function callDealSignals(db: Db, crm: CrmName, callId: string): Promise<CallDealSignals | null> {
  const call = await db.dealCall.findUnique({ where: { crm_callId: { crm, callId } } });
  if (!call) return null;
  const deal = await db.dealSignal.findUnique({ where: { crm_dealId: { crm, dealId: call.dealId } } });
  const writtenCallId = deal?.writtenCallId ?? null;
  let covered = writtenCallId === callId;
  if (writtenCallId && !covered) {
    const written = await db.dealCall.findUnique({ where: { crm_callId: { crm, callId: writtenCallId } } });
    const start = (c: { callId: string; startedAt: Date }) => ({
      callId: c.callId,
      startedAt: c.startedAt.getTime(),
    });
    covered = written !== null && written.dealId === call.dealId && isNewer(start(written), start(call));
  }
  const lastError = deal?.lastError ?? null;
  // While a newer call is due, the error is that call's try (releaseDeal), not the covering write's.
  const refused = lastError !== null && deal?.newestCallId === writtenCallId;
  return {
    dealId: call.dealId,
    state: covered ? (refused ? 'refused' : 'written') : 'due',
    writtenCallId,
    writtenAt: deal?.writtenAt ?? null,
    lastError,
  };
}
