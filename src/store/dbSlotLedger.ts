import type { LedgerSnapshot, SlotGrant, SlotGrants, SlotLedger, SlotRequest } from '../budget/types.js';
import {
  countInWindow,
  decideSlots,
  MINUTE_MS,
  SECOND_MS,
  slotCheckFor,
  utcDayStart,
} from '../budget/window.js';
import { inTransaction, type Db } from './database.js';

/**
 * A SlotLedger in the database, so that several crm-sync processes share one Service budget; the
 * arithmetic is the in-memory ledger's (src/budget/window.ts). Tables: budget_ledger (requests
 * per UTC day; its row is the lock), budget_request (start times of the last minutes) and
 * budget_pause (a 429 pause every process honours).
 *
 * `acquire` (and `acquireMany`, for a batch of requests ready at once) is one short transaction:
 * lock the ledger, read the pause and the recent starts, decide, and on a grant record the starts
 * and count them. Concurrent acquirers queue on the day
 * row, so two processes can never both take the last slot. Times are the callers' (`nowMs`), so
 * hosts should keep their clocks in sync (SlotRequest.marginMs absorbs a small skew).
 */
export interface DbSlotLedgerOptions {
  db: Db;
  /** One ledger per Service API key (default 'service'). */
  ledger?: string | undefined;
  /** Live requests take their slot through this client (Database.live), not behind bulk work. */
  liveDb?: Db | undefined;
}

/** Starts older than this cannot matter to any window, even with a generous margin. */
const KEEP_MS = 2 * MINUTE_MS;

type PauseReason = 'rate' | 'daily';

export function createDbSlotLedger(options: DbSlotLedgerOptions): SlotLedger {
  const { db } = options;
  const ledger = options.ledger ?? 'service';

  async function acquire(request: SlotRequest): Promise<SlotGrant> {
    const grants = await acquireMany(request, 1);
    return grants.granted ? { granted: true } : grants;
  }

  async function acquireMany(request: SlotRequest, wanted: number): Promise<SlotGrants> {
    const now = new Date(request.nowMs);
    const day = utcDayKey(request.nowMs);
    const keepFrom = new Date(request.nowMs - KEEP_MS);
    const windowFrom = new Date(request.nowMs - MINUTE_MS - (request.marginMs ?? 0));
    return inTransaction(request.priority === 'live' ? (options.liveDb ?? db) : db, async (tx) => {
      // One lock per ledger, whatever the day: two processes either side of UTC midnight (or of
      // a small clock skew) would lock different day rows, yet read the same 60 s window.
      await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtext(${ledger}))::text AS locked`;
      // After the lock (a statement of its own, so this one's snapshot sees every earlier grant):
      // the day's count (the no-op update creates the row), the pause and the recent starts.
      const [state] = await tx.$queryRaw<
        { used: number; paused_until: Date | null; reason: string | null; starts: number[] | null }[]
      >`
        WITH day AS (
          INSERT INTO budget_ledger (ledger, day, used, updated_at) VALUES (${ledger}, ${day}::date, 0, ${now})
          ON CONFLICT (ledger, day) DO UPDATE SET used = budget_ledger.used
          RETURNING used)
        SELECT (SELECT used FROM day) AS used, p.paused_until, p.reason,
               ARRAY(SELECT (extract(epoch FROM started_at) * 1000)::float8 FROM budget_request
                     WHERE ledger = ${ledger} AND started_at > ${windowFrom} ORDER BY started_at) AS starts
        FROM (SELECT 1) AS one LEFT JOIN budget_pause p ON p.ledger = ${ledger}`;
      const pause = state?.paused_until ? { paused_until: state.paused_until, reason: state.reason } : null;
      const decision = decideSlots(
        slotCheckFor(request, {
          starts: (state?.starts ?? []).map(Number),
          usedToday: state?.used ?? 0,
          pausedUntil: pause ? pause.paused_until.getTime() : null,
          pausedForDailyCap: pause?.reason === 'daily',
        }),
        wanted,
      );
      if (!decision.allowed) {
        return { granted: false, retryAtMs: decision.retryAtMs, dailyCapReached: decision.dailyCapReached };
      }
      const { count } = decision;
      await tx.$executeRaw`
        WITH started AS (
          INSERT INTO budget_request (ledger, started_at, priority)
          SELECT ${ledger}, ${now}, ${request.priority} FROM generate_series(1, ${count}::int)
        ), counted AS (
          UPDATE budget_ledger SET used = used + ${count}::int, updated_at = ${now}
          WHERE ledger = ${ledger} AND day = ${day}::date
        )
        DELETE FROM budget_request WHERE ledger = ${ledger} AND started_at <= ${keepFrom}`;
      return { granted: true, count };
    });
  }

  /** Only ever extends a pause; at an equal end, 'daily' wins (as in the in-memory ledger). */
  async function pauseUntil(untilMs: number, reason: PauseReason = 'rate'): Promise<void> {
    const until = new Date(untilMs);
    await db.$executeRaw`
      INSERT INTO budget_pause (ledger, paused_until, reason, updated_at) VALUES (${ledger}, ${until}, ${reason}, now())
      ON CONFLICT (ledger) DO UPDATE SET
        reason = CASE
          WHEN EXCLUDED.paused_until > budget_pause.paused_until
            OR (EXCLUDED.paused_until = budget_pause.paused_until AND EXCLUDED.reason = 'daily')
          THEN EXCLUDED.reason ELSE budget_pause.reason END,
        paused_until = GREATEST(budget_pause.paused_until, EXCLUDED.paused_until),
        updated_at = EXCLUDED.updated_at`;
  }

  async function snapshot(nowMs: number): Promise<LedgerSnapshot> {
    const [dayRows, pause, starts] = await Promise.all([
      db.$queryRaw<{ used: number }[]>`
        SELECT used FROM budget_ledger WHERE ledger = ${ledger} AND day = ${utcDayKey(nowMs)}::date`,
      db.budgetPause.findUnique({ where: { ledger }, select: { pausedUntil: true, reason: true } }),
      db.budgetRequest.findMany({
        where: { ledger, startedAt: { gt: new Date(nowMs - MINUTE_MS) } },
        select: { startedAt: true },
        orderBy: { startedAt: 'asc' },
      }),
    ]);
    const times = starts.map((s) => s.startedAt.getTime());
    const paused = pause !== null && pause.pausedUntil.getTime() > nowMs;
    return {
      usedToday: dayRows[0]?.used ?? 0,
      inLastSecond: countInWindow(times, nowMs, SECOND_MS),
      inLastMinute: countInWindow(times, nowMs, MINUTE_MS),
      pausedUntil: paused ? pause.pausedUntil.getTime() : null,
      pauseReason: paused ? (pause.reason === 'daily' ? 'daily' : 'rate') : null,
    };
  }

  return { acquire, acquireMany, pauseUntil, snapshot };
}

/** 'YYYY-MM-DD' of the UTC day; passed as text and cast, so the session time zone cannot shift it. */
function utcDayKey(ms: number): string {
  return new Date(utcDayStart(ms)).toISOString().slice(0, 10);
}
