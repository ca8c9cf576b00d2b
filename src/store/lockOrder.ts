/**
 * The one order in which statements lock rows (issue 22, defect 11). Every statement or
 * transaction that locks rows of several kinds takes them in this order, so concurrent ones (the
 * webhook inbox's round, the poller, the write-back, the follow-up answer and settles, the job
 * queue's sweeps) wait for each other but never deadlock (SQLSTATE 40P01):
 *
 *   1. sync_status rows, in CALL_ID_ORDER;
 *   2. each call's call_followup rows (its drafts), after its sync_status row;
 *   3. job rows, last: running ones first, by id (a fence's share lock, heartbeats,
 *      completions, lease sweeps), then queued ones by key (JOB_KEY_ORDER: an enqueue's ON
 *      CONFLICT, a superseded job's sibling). Claims skip locked rows and wait for none.
 *
 * Within one statement PostgreSQL runs its parts in whatever order the plan pulls them, so a later
 * part is made to depend on the earlier one's locks with `after`.
 */
import { Prisma } from '../generated/prisma/client.js';

/**
 * The order of calls' rows: by call id, byte-wise whatever the database's collation, as
 * JavaScript's `<` compares ASCII ids.
 */
export const CALL_ID_ORDER = Prisma.sql`call_id COLLATE "C"`;

/** The order of queued job rows, which statements find by key. */
export const JOB_KEY_ORDER = Prisma.sql`key COLLATE "C"`;

/**
 * A one-row relation (alias `after_<cte>`) that exists only once CTE `cte` has run to its end:
 * cross-joined into a later part of the statement, it makes PostgreSQL run `cte` (say, the
 * SELECT ... FOR UPDATE locking the calls' rows) before that part takes any lock of its own.
 */
export function after(cte: string): Prisma.Sql {
  if (!/^[a-z_]+$/.test(cte)) throw new Error(`after: not a CTE name: ${cte}`);
  return Prisma.raw(`(SELECT count(*) FROM ${cte}) AS after_${cte}`);
}
