/**
 * A CrmSlotLedger in the database, so that every replica (and a CLI command on the same database)
 * counts against one HubSpot app's ten-second and search windows and one account's daily
 * allowance, as the Service budget's DbSlotLedger does for the Service. The decisions are
 * src/crm/limits/slots.ts's; tables crm_request (recent slots) and crm_ledger (pauses, the last
 * daily report).
 *
 * Each acquire is one short transaction on the database's clock: lock the account (advisory
 * lock), record the answers of finished requests, read `clock_timestamp()` and the slots, decide,
 * insert the granted slots. Acquires that arrive together go in one transaction (group commit). A
 * finished request's answer time is its slot's start plus the duration this process measured from
 * before it asked: later than the real answer by the round trip, so never too early, and no
 * process's clock is compared with another's. Answers ride on the next transaction, or are written
 * on their own a moment later when none comes.
 */
import type { Acquired, CrmSlotLedger, SlotGrant } from '../crm/limits/ledger.js';
import {
  decideSlot,
  keepFromMs,
  KEEP_MS,
  MAX_FLIGHT_MS,
  REPORT_TTL_MS,
  type DailyReport,
  type Lane,
  type LedgerState,
  type SlotAsk,
} from '../crm/limits/slots.js';
import { Prisma } from '../generated/prisma/client.js';
import { createGroupCommit } from '../util/groupCommit.js';
import type { Clock } from '../util/clock.js';
import { inTransaction, type Database, type Db } from './database.js';
import { epochMs } from './dbClock.js';

export interface DbCrmLedgerOptions {
  db: Db;
  /** The CRM account: 'hubspot' or 'salesforce'. */
  ledger: string;
  clock: Clock;
  /** How long finished requests wait for an acquire to carry them (default 250 ms). */
  flushAfterMs?: number;
}

type Row = {
  now: number;
  paused_until: number | null;
  pause_reason: string | null;
  search_paused_until: number | null;
  daily_limit: number | null;
  daily_remaining: number | null;
  report_from: number | null;
  probe_since: number | null;
  lanes: string[];
  starts: number[];
  dones: (number | null)[];
};

/** How often a transaction also deletes the slots no window or report can count any more. */
const PRUNE_EVERY_MS = 5_000;

export function createDbCrmLedger(options: DbCrmLedgerOptions): CrmSlotLedger {
  const { db, ledger, clock } = options;
  const flushAfterMs = options.flushAfterMs ?? 250;
  let finished: { id: number; elapsedMs: number }[] = [];
  let pendingReport: DailyReport | null = null;
  let timer: unknown;
  let closed = false;
  let prunedAt = -Infinity;

  const grants = createGroupCommit((asks: SlotAsk[]) => decideAll(asks), { maxBatch: 64 });

  async function decideAll(asks: SlotAsk[]): Promise<Acquired[]> {
    const done = takeFinished();
    const report = pendingReport;
    pendingReport = null;
    try {
      return await inTransaction(db, async (tx) => {
        await lockAndRecord(tx, done, report);
        const state = await readState(tx);
        const out: (Acquired | Lane)[] = [];
        let dailyPause: { untilMs: number; dropReport: boolean } | null = null;
        for (const ask of asks) {
          const d = decideSlot(state, ask);
          if (d.grant) {
            state.slots = [...state.slots, { lane: ask.lane, startedAt: state.nowMs, doneAt: null }];
            out.push(ask.lane);
            continue;
          }
          if (d.daily && d.newPause) {
            dailyPause = { untilMs: d.untilMs, dropReport: ask.dailyHold.kind === 'pause' };
            Object.assign(state, { pausedUntil: d.untilMs, pauseReason: 'daily' });
            if (dailyPause.dropReport) Object.assign(state, { report: null, probeSince: state.nowMs });
          }
          out.push({ granted: false, waitMs: d.waitMs, daily: d.daily });
        }
        const ids = await insertGranted(tx, out, state.nowMs);
        if (dailyPause) await writeDailyPause(tx, dailyPause, state.nowMs);
        // Now and then: the table stays small however little each transaction deletes.
        if (state.nowMs - prunedAt >= PRUNE_EVERY_MS) {
          await prune(tx, state);
          prunedAt = state.nowMs;
        }
        return out.map((o) =>
          typeof o === 'string'
            ? { granted: true as const, slot: { id: ids.get(o)!.shift()!, startedAt: state.nowMs } }
            : o,
        );
      });
    } catch (error) {
      // Nothing was recorded: the answers and the report go with the next try.
      finished = [...done, ...finished];
      pendingReport ??= report;
      throw error;
    }
  }

  function takeFinished() {
    const done = finished;
    finished = [];
    if (timer !== undefined) clock.clearTimer(timer);
    timer = undefined;
    return done;
  }

  /**
   * Takes the account's lock, then (in the same statement, after it) records the answers and the
   * report this process has for the ledger. The next statement's snapshot sees every earlier grant.
   */
  async function lockAndRecord(
    tx: Db,
    done: { id: number; elapsedMs: number }[],
    report: DailyReport | null,
  ): Promise<void> {
    const ids = done.map((d) => String(d.id));
    const elapsed = done.map((d) => d.elapsedMs);
    await tx.$queryRaw`
      WITH locked AS (SELECT pg_advisory_xact_lock(hashtext(${`crm:${ledger}`})) AS l),
      fin AS (
        UPDATE crm_request AS r SET done_at = r.started_at + c.ms * interval '1 millisecond'
        FROM unnest(${ids}::bigint[], ${elapsed}::float8[]) AS c (id, ms), locked
        WHERE r.id = c.id AND r.done_at IS NULL
        RETURNING r.id),
      rep AS (${reportUpsert(report, Prisma.sql`FROM locked`)})
      SELECT (SELECT count(*) FROM locked)::int AS locked, (SELECT count(*) FROM fin)::int AS finished,
             (SELECT count(*) FROM rep)::int AS reported`;
  }

  /** Records `report` unless a newer one is there; clears a probe it answers. No-op without one. */
  function reportUpsert(report: DailyReport | null, from: Prisma.Sql = Prisma.empty): Prisma.Sql {
    const has = report !== null;
    const at = new Date(report?.fromMs ?? 0);
    return Prisma.sql`
      INSERT INTO crm_ledger (ledger, daily_limit, daily_remaining, report_from, updated_at)
      SELECT ${ledger}, ${report?.limit ?? 0}::int, ${report?.remaining ?? 0}::int, ${at}::timestamptz, clock_timestamp()
      ${from} WHERE ${has}::boolean
      ON CONFLICT (ledger) DO UPDATE SET
        daily_limit = EXCLUDED.daily_limit, daily_remaining = EXCLUDED.daily_remaining,
        report_from = EXCLUDED.report_from, updated_at = EXCLUDED.updated_at,
        probe_since = CASE WHEN crm_ledger.probe_since <= EXCLUDED.report_from THEN NULL
                           ELSE crm_ledger.probe_since END
      WHERE crm_ledger.report_from IS NULL OR crm_ledger.report_from <= EXCLUDED.report_from
      RETURNING ledger`;
  }

  async function writeFinished(tx: Db, done: { id: number; elapsedMs: number }[]): Promise<void> {
    if (done.length === 0) return;
    const ids = done.map((d) => String(d.id));
    const elapsed = done.map((d) => d.elapsedMs);
    await tx.$executeRaw`
      UPDATE crm_request AS r SET done_at = r.started_at + c.ms * interval '1 millisecond'
      FROM unnest(${ids}::bigint[], ${elapsed}::float8[]) AS c (id, ms)
      WHERE r.id = c.id AND r.done_at IS NULL`;
  }

  async function writeReport(tx: Db, report: DailyReport): Promise<void> {
    await tx.$queryRaw`WITH rep AS (${reportUpsert(report)}) SELECT count(*)::int AS reported FROM rep`;
  }

  async function readState(tx: Prisma.TransactionClient): Promise<LedgerState> {
    const keepMs = `interval '${KEEP_MS} milliseconds'`;
    const flightMs = `interval '${MAX_FLIGHT_MS} milliseconds'`;
    const ttlMs = `interval '${REPORT_TTL_MS} milliseconds'`;
    // clock_timestamp(), read once after the lock: the time of every decision of this transaction.
    const [row] = await tx.$queryRawUnsafe<Row[]>(
      `WITH t AS (SELECT clock_timestamp() AS now),
       l AS (INSERT INTO crm_ledger (ledger, updated_at) SELECT $1, now FROM t
             ON CONFLICT (ledger) DO UPDATE SET ledger = EXCLUDED.ledger RETURNING *),
       r AS (SELECT r.id, r.lane, r.started_at, r.done_at FROM crm_request r, t, l
             WHERE r.ledger = $1
               AND COALESCE(r.done_at, r.started_at + ${flightMs})
                   > LEAST(t.now - ${keepMs}, GREATEST(COALESCE(l.report_from, t.now), t.now - ${ttlMs})))
       SELECT ${epochMs('t.now')} AS now, ${epochMs('l.paused_until')} AS paused_until, l.pause_reason,
              ${epochMs('l.search_paused_until')} AS search_paused_until, l.daily_limit, l.daily_remaining,
              ${epochMs('l.report_from')} AS report_from, ${epochMs('l.probe_since')} AS probe_since,
              ARRAY(SELECT lane FROM r ORDER BY id) AS lanes,
              ARRAY(SELECT ${epochMs('started_at')} FROM r ORDER BY id) AS starts,
              ARRAY(SELECT ${epochMs('done_at')} FROM r ORDER BY id) AS dones
       FROM t, l`,
      ledger,
    );
    const r = row!;
    const num = (v: number | null) => (v === null ? null : Number(v));
    return {
      nowMs: Number(r.now),
      slots: r.lanes.map((lane, i) => ({
        lane: lane as Lane,
        startedAt: Number(r.starts[i]),
        doneAt: num(r.dones[i] ?? null),
      })),
      pausedUntil: num(r.paused_until),
      pauseReason: r.pause_reason === 'daily' ? 'daily' : r.pause_reason === 'rate' ? 'rate' : null,
      searchPausedUntil: num(r.search_paused_until),
      report:
        r.daily_limit !== null && r.daily_remaining !== null && r.report_from !== null
          ? { limit: r.daily_limit, remaining: r.daily_remaining, fromMs: Number(r.report_from) }
          : null,
      probeSince: num(r.probe_since),
    };
  }

  /** The granted slots' rows, at the transaction's time; ids per lane (slots of a lane and time are alike). */
  async function insertGranted(
    tx: Db,
    out: (Acquired | Lane)[],
    nowMs: number,
  ): Promise<Map<Lane, number[]>> {
    const lanes = out.filter((o): o is Lane => typeof o === 'string');
    const ids = new Map<Lane, number[]>();
    if (lanes.length === 0) return ids;
    const rows = await tx.$queryRaw<{ id: string; lane: Lane }[]>`
      INSERT INTO crm_request (ledger, lane, started_at)
      SELECT ${ledger}, g.lane, ${new Date(nowMs)}::timestamptz FROM unnest(${lanes}::text[]) AS g (lane)
      RETURNING id::text AS id, lane`;
    for (const r of rows) ids.set(r.lane, [...(ids.get(r.lane) ?? []), Number(r.id)]);
    return ids;
  }

  async function writeDailyPause(tx: Db, pause: { untilMs: number; dropReport: boolean }, nowMs: number) {
    const until = new Date(pause.untilMs);
    await tx.$executeRaw`
      UPDATE crm_ledger SET
        paused_until = GREATEST(COALESCE(paused_until, ${until}::timestamptz), ${until}::timestamptz),
        pause_reason = 'daily',
        daily_remaining = CASE WHEN ${pause.dropReport}::boolean THEN NULL ELSE daily_remaining END,
        report_from = CASE WHEN ${pause.dropReport}::boolean THEN NULL ELSE report_from END,
        probe_since = CASE WHEN ${pause.dropReport}::boolean THEN ${new Date(nowMs)}::timestamptz ELSE probe_since END,
        updated_at = clock_timestamp()
      WHERE ledger = ${ledger}`;
  }

  /** Forgets slots no window or report can count any more. */
  async function prune(tx: Db, state: LedgerState): Promise<void> {
    const keepFrom = new Date(keepFromMs(state.nowMs, state.report));
    const flight = `${MAX_FLIGHT_MS} milliseconds`;
    await tx.$executeRaw`
      DELETE FROM crm_request WHERE ledger = ${ledger}
        AND COALESCE(done_at, started_at + ${flight}::interval) < ${keepFrom}::timestamptz`;
  }

  /** Writes the answers and report that no acquire carried (a quiet moment), outside any lock. */
  async function flushPending(): Promise<void> {
    const done = takeFinished();
    const report = pendingReport;
    pendingReport = null;
    try {
      await writeFinished(db, done);
      if (report) await writeReport(db, report);
    } catch {
      // Left in flight: such a slot is held a little longer (MAX_FLIGHT_MS at most), never too
      // short; a lost report is replaced by the next response's.
    }
  }

  return {
    acquire: (ask) => grants.submit(ask),
    release(slot: SlotGrant, elapsedMs: number) {
      finished.push({ id: slot.id, elapsedMs: Math.max(0, elapsedMs) });
      if (timer === undefined && !closed) timer = clock.setTimer(() => void flushPending(), flushAfterMs);
    },
    report(report, fromMs) {
      if (!pendingReport || pendingReport.fromMs <= fromMs) pendingReport = { ...report, fromMs };
      if (timer === undefined && !closed) timer = clock.setTimer(() => void flushPending(), flushAfterMs);
    },
    async pause(pauseMs, scope, reason = 'rate') {
      const span = `${Math.max(0, Math.round(pauseMs))} milliseconds`;
      if (scope === 'search') {
        await db.$executeRaw`
          INSERT INTO crm_ledger (ledger, search_paused_until, updated_at)
          VALUES (${ledger}, clock_timestamp() + ${span}::interval, clock_timestamp())
          ON CONFLICT (ledger) DO UPDATE SET
            search_paused_until = GREATEST(COALESCE(crm_ledger.search_paused_until, EXCLUDED.search_paused_until),
                                           EXCLUDED.search_paused_until),
            updated_at = EXCLUDED.updated_at`;
        return;
      }
      // Only ever extends a pause; at an equal end, 'daily' wins.
      await db.$executeRaw`
        INSERT INTO crm_ledger (ledger, paused_until, pause_reason, updated_at)
        VALUES (${ledger}, clock_timestamp() + ${span}::interval, ${reason}, clock_timestamp())
        ON CONFLICT (ledger) DO UPDATE SET
          pause_reason = CASE
            WHEN crm_ledger.paused_until IS NULL OR EXCLUDED.paused_until > crm_ledger.paused_until
              OR (EXCLUDED.paused_until = crm_ledger.paused_until AND EXCLUDED.pause_reason = 'daily')
            THEN EXCLUDED.pause_reason ELSE crm_ledger.pause_reason END,
          paused_until = GREATEST(COALESCE(crm_ledger.paused_until, EXCLUDED.paused_until), EXCLUDED.paused_until),
          daily_remaining = CASE WHEN EXCLUDED.pause_reason = 'daily' THEN NULL ELSE crm_ledger.daily_remaining END,
          report_from = CASE WHEN EXCLUDED.pause_reason = 'daily' THEN NULL ELSE crm_ledger.report_from END,
          probe_since = CASE WHEN EXCLUDED.pause_reason = 'daily' THEN EXCLUDED.updated_at ELSE crm_ledger.probe_since END,
          updated_at = EXCLUDED.updated_at`;
    },
    async close() {
      closed = true;
      await flushPending();
    },
  };
}

/**
 * The CRM ledger a worker uses: on PostgreSQL the shared one, so replicas count one budget; on the
 * embedded database none (the adapter's own, in memory), since only one process can open it
 * (embeddedLock.ts) and every request of the account passes through that process anyway.
 */
export function crmLedgerFor(
  database: Pick<Database, 'kind' | 'prisma'>,
  crm: string,
  clock: Clock,
  cleanup: (() => Promise<unknown>)[],
): CrmSlotLedger | undefined {
  if (database.kind !== 'postgres') return undefined;
  const ledger = createDbCrmLedger({ db: database.prisma, ledger: crm, clock });
  cleanup.unshift(() => ledger.close());
  return ledger;
}
