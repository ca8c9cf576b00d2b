/**
 * Reads for the budget forecast (src/budget/forecast.ts): what the worker's history says a call
 * costs in Service requests.
 */
import type { CrmName } from '../crm/types.js';
import type { Db } from './database.js';
import { JOB_PRIORITY } from './jobRecord.js';

/** Days of history the measurement looks back over (the current UTC day included). */
export const HISTORY_DAYS = 7;
const DAY_MS = 86_400_000;

/**
 * Service requests started (every priority, from the shared ledger's daily counts) and calls that
 * finished their sync (written back, skipped or failed) over the last HISTORY_DAYS UTC days.
 * Requests of calls still under way count too, so the measure errs a little high: the safe side
 * for a forecast.
 */
export async function requestHistory(
  db: Db,
  input: { crm: CrmName; nowMs: number; ledger?: string },
): Promise<{ requests: number; calls: number }> {
  const firstDay = new Date(Math.floor(input.nowMs / DAY_MS) * DAY_MS - (HISTORY_DAYS - 1) * DAY_MS);
  const [used, finished] = await Promise.all([
    db.budgetLedger.aggregate({
      where: { ledger: input.ledger ?? 'service', day: { gte: firstDay } },
      _sum: { used: true },
    }),
    // A finished call's last update is its finish (sync_status is indexed on updated_at).
    db.syncStatus.count({
      where: {
        crm: input.crm,
        state: { in: ['written_back', 'skipped', 'failed'] },
        updatedAt: { gte: firstDay },
      },
    }),
  ]);
  return { requests: used._sum.used ?? 0, calls: finished };
}

/**
 * Jobs queued at the lowest (backfill) priority and due by `now`: the backlog a backfill ETA is
 * about. Jobs set to run later (a call not yet analysed, looked at again in a while) are not
 * backlog yet.
 */
export async function countDueBackfillJobs(db: Db, nowMs: number): Promise<number> {
  return db.job.count({
    where: { state: 'queued', priority: { lt: JOB_PRIORITY.writeback }, runAt: { lte: new Date(nowMs) } },
  });
}
