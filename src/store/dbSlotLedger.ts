import type { LedgerSnapshot, SlotGrant, SlotGrants, SlotLedger, SlotRequest } from '../budget/types.js';
import { countInWindow, decideSlots, MINUTE_MS, SECOND_MS, slotCheckFor } from '../budget/window.js';
import { Prisma } from '../generated/prisma/client.js';
import { inTransaction, type Db } from './database.js';
import { DB_NOW, epochMs as epochMsText, msInterval, type DbClock } from './dbClock.js';

/**
 * A SlotLedger in the database, so that several crm-sync processes share one Service budget; the
 * arithmetic is the in-memory ledger's (src/budget/window.ts). Tables: budget_ledger (requests
 * per UTC day; its row is the lock), budget_request (start times of the last minutes) and
 * budget_pause (a 429 pause every process honours).
 *
 * `acquire` (and `acquireMany`, for a batch of requests ready at once) is one short transaction:
 * lock the ledger, read the database's clock once, the pause and the recent starts, decide, and on
 * a grant record the starts and count them. Concurrent acquirers queue on the lock, so two
 * processes can never both take the last slot. Window membership, the UTC day and pruning all
 * go by that one read of the database's clock, never by a caller's: replicas with skewed clocks
 * count the same windows and the same day. The caller's `nowMs` only translates the answer
 * (when to ask again) into its own clock.
 */
export interface DbSlotLedgerOptions {
  db: Db;
  /** One ledger per Service API key (default 'service'). */
  ledger?: string | undefined;
  /** Live requests take their slot through this client (Database.live), not behind bulk work. */
  liveDb?: Db | undefined;
  /** The database's clock (default DB_NOW); tests stop it at a time of their choosing. */
  dbClock?: DbClock | undefined;
}

/** Starts older than this cannot matter to any window, even with a generous margin. */
const KEEP_MS = 2 * MINUTE_MS;

type PauseReason = 'rate' | 'daily';

export function createDbSlotLedger(options: DbSlotLedgerOptions): SlotLedger {
  const { db } = options;
  const ledger = options.ledger ?? 'service';
  const dbNow = options.dbClock ?? DB_NOW;

  async function acquire(request: SlotRequest): Promise<SlotGrant> {
    const grants = await acquireMany(request, 1);
    return grants.granted ? { granted: true } : grants;
  }

  async function acquireMany(request: SlotRequest, wanted: number): Promise<SlotGrants> {
    const leadMs = request.leadMs ?? 0;
    const spanMs = MINUTE_MS + (request.marginMs ?? 0);
    return inTransaction(request.priority === 'live' ? (options.liveDb ?? db) : db, async (tx) => {
      // One lock per ledger, whatever the day: two processes either side of UTC midnight would
      // lock different day rows, yet read the same 60 s window.
      await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtext(${ledger}))::text AS locked`;
      // After the lock (a statement of its own, so this one's snapshot sees every earlier grant):
      // the database's time, read once, and by it the day's count (the no-op update creates the
      // row), the pause and the recent starts. The request is decided for when it will leave.
      const [state] = await tx.$queryRaw<
        {
          at: number;
          day: string;
          used: number;
          paused_until: number | null;
          reason: string | null;
          starts: number[] | null;
        }[]
      >`
        WITH t AS (SELECT ${dbNow()} + ${msInterval(leadMs)} AS at),
        d AS (SELECT to_char(t.at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day FROM t),
        day AS (
          INSERT INTO budget_ledger (ledger, day, used, updated_at)
          SELECT ${ledger}, d.day::date, 0, t.at FROM t, d
          ON CONFLICT (ledger, day) DO UPDATE SET used = budget_ledger.used
          RETURNING used)
        SELECT ${epochMs('t.at')} AS at, d.day, (SELECT used FROM day) AS used,
               ${epochMs('p.paused_until')} AS paused_until, p.reason,
               ARRAY(SELECT ${epochMs('started_at')} FROM budget_request
                     WHERE ledger = ${ledger} AND started_at > t.at - ${msInterval(spanMs)}
                     ORDER BY started_at) AS starts
        FROM t CROSS JOIN d LEFT JOIN budget_pause p ON p.ledger = ${ledger}`;
      const atMs = Number(state!.at);
      // Answers are in the database's time; the caller waits on its own clock.
      const toCaller = (ms: number) => request.nowMs + (ms - atMs);
      const decision = decideSlots(
        slotCheckFor(
          { ...request, nowMs: atMs },
          {
            starts: (state!.starts ?? []).map(Number),
            usedToday: state!.used,
            pausedUntil: state!.paused_until === null ? null : Number(state!.paused_until),
            pausedForDailyCap: state!.reason === 'daily',
          },
        ),
        wanted,
      );
      if (!decision.allowed) {
        return {
          granted: false,
          retryAtMs: toCaller(decision.retryAtMs),
          dailyCapReached: decision.dailyCapReached,
        };
      }
      const { count } = decision;
      const at = new Date(atMs);
      await tx.$executeRaw`
        WITH started AS (
          INSERT INTO budget_request (ledger, started_at, priority)
          SELECT ${ledger}, ${at}, ${request.priority} FROM generate_series(1, ${count}::int)
        ), counted AS (
          UPDATE budget_ledger SET used = used + ${count}::int, updated_at = ${at}
          WHERE ledger = ${ledger} AND day = ${state!.day}::date
        )
        DELETE FROM budget_request WHERE ledger = ${ledger} AND started_at <= ${new Date(atMs - KEEP_MS)}`;
      return { granted: true, count };
    });
  }

  /** Only ever extends a pause; at an equal end, 'daily' wins (as in the in-memory ledger). */
  async function pauseUntil(untilMs: number, reason: PauseReason, nowMs: number): Promise<void> {
    // The pause's length, not its end, is the caller's: it ends by the database's clock.
    await db.$executeRaw`
      INSERT INTO budget_pause (ledger, paused_until, reason, updated_at)
      SELECT ${ledger}, t.now + ${msInterval(untilMs - nowMs)}, ${reason}, t.now FROM (SELECT ${dbNow()} AS now) t
      ON CONFLICT (ledger) DO UPDATE SET
        reason = CASE
          WHEN EXCLUDED.paused_until > budget_pause.paused_until
            OR (EXCLUDED.paused_until = budget_pause.paused_until AND EXCLUDED.reason = 'daily')
          THEN EXCLUDED.reason ELSE budget_pause.reason END,
        paused_until = GREATEST(budget_pause.paused_until, EXCLUDED.paused_until),
        updated_at = EXCLUDED.updated_at`;
  }

  async function snapshot(nowMs: number): Promise<LedgerSnapshot> {
    const [row] = await db.$queryRaw<
      {
        now: number;
        used: number | null;
        paused_until: number | null;
        reason: string | null;
        starts: number[];
      }[]
    >`
      WITH t AS (SELECT ${dbNow()} AS now)
      SELECT ${epochMs('t.now')} AS now,
             (SELECT used FROM budget_ledger
              WHERE ledger = ${ledger} AND day = to_char(t.now AT TIME ZONE 'UTC', 'YYYY-MM-DD')::date) AS used,
             ${epochMs('p.paused_until')} AS paused_until, p.reason,
             ARRAY(SELECT ${epochMs('started_at')} FROM budget_request
                   WHERE ledger = ${ledger} AND started_at > t.now - ${msInterval(MINUTE_MS)}
                   ORDER BY started_at) AS starts
      FROM t LEFT JOIN budget_pause p ON p.ledger = ${ledger}`;
    const dbMs = Number(row!.now);
    const times = row!.starts.map(Number);
    const pausedUntil = row!.paused_until === null ? null : Number(row!.paused_until);
    const paused = pausedUntil !== null && pausedUntil > dbMs;
    return {
      usedToday: row!.used ?? 0,
      inLastSecond: countInWindow(times, dbMs, SECOND_MS),
      inLastMinute: countInWindow(times, dbMs, MINUTE_MS),
      // In the caller's clock, as every time it is handed.
      pausedUntil: paused ? nowMs + (pausedUntil - dbMs) : null,
      pauseReason: paused ? (row!.reason === 'daily' ? 'daily' : 'rate') : null,
    };
  }

  return { acquire, acquireMany, pauseUntil, snapshot };
}

const epochMs = (sql: string) => Prisma.raw(epochMsText(sql));
