import { Prisma } from '../generated/prisma/client.js';
import type { Db } from './database.js';
import { DB_NOW, msInterval, type DbClock } from './dbClock.js';
import { jobRetryDelayMs } from './jobBackoff.js';
import { JOB_KEY_ORDER } from './lockOrder.js';
import { toJob, type JobRecord, type JobRow } from './jobRecord.js';

/**
 * A job queue in PostgreSQL (table job), the same code on PostgreSQL and the embedded PGlite.
 * Workers claim due jobs with FOR UPDATE SKIP LOCKED under a lease (locked_until); a job whose
 * lease has passed is taken back by the next claim, so a killed worker loses nothing. Leases are
 * set and judged on the database's clock (dbClock.ts), so a replica whose clock runs ahead cannot
 * take a lease early, nor one whose clock lags hand out a lease that has already run out. Delivery is
 * at least once: a worker that outlives its lease learns it from complete/heartbeat returning
 * false, and its job may run twice; handlers must be idempotent (CRM writes upsert on call id).
 * Each claim gives the job a new epoch, and every update of a running job names the epoch it
 * holds, so a run that lost its lease cannot touch the job's next run, even in the same worker.
 * docs/persistence.md says why this is not pg-boss.
 * Jobs are added by jobEnqueue.ts; rows are mapped by jobRecord.ts.
 */

export interface ClaimInput {
  workerId: string;
  limit: number;
  /** How long the claim holds before another worker may take the job back. */
  leaseMs: number;
  now: Date;
  /** Only these kinds (default all). */
  kinds?: readonly string[] | undefined;
  /** Take back lapsed leases first (default true); false when the caller does that itself. */
  requeueExpired?: boolean | undefined;
  /** The clock leases run on (default the database's). */
  dbClock?: DbClock | undefined;
}

/**
 * Claims up to `limit` due jobs, highest priority first, then earliest run_at; each claim counts
 * an attempt. Jobs whose lease has passed are taken back first (see `requeueExpired`). Concurrent
 * claimers get different jobs (SKIP LOCKED) and never wait for each other.
 */
export async function claimJobs(db: Db, input: ClaimInput): Promise<JobRecord[]> {
  if (input.requeueExpired !== false) await requeueExpiredJobs(db, input.now, input.dbClock);
  const dbNow = input.dbClock ?? DB_NOW;
  const kindFilter =
    input.kinds && input.kinds.length > 0
      ? Prisma.sql`AND kind IN (${Prisma.join(input.kinds)})`
      : Prisma.empty;
  const rows = await db.$queryRaw<JobRow[]>`
    WITH picked AS (
      SELECT id FROM job
      WHERE state = 'queued' AND run_at <= ${input.now} ${kindFilter}
        -- One job per key at a time: a job queued behind a running one waits for it.
        AND (key IS NULL OR NOT EXISTS (
          SELECT 1 FROM job r WHERE r.key = job.key AND r.state = 'running'))
      ORDER BY priority DESC, run_at, id
      LIMIT ${input.limit}
      FOR UPDATE SKIP LOCKED
    ), t AS (SELECT ${dbNow()} AS now)
    UPDATE job SET state = 'running', attempts = job.attempts + 1, locked_by = ${input.workerId},
                   epoch = job.epoch + 1, locked_until = t.now + ${msInterval(input.leaseMs)}, updated_at = ${input.now}
    FROM picked, t WHERE job.id = picked.id
    RETURNING job.*`;
  return rows
    .map(toJob)
    .sort((a, b) => b.priority - a.priority || a.runAt.getTime() - b.runAt.getTime() || a.id - b.id);
}

/**
 * Running jobs whose lease has passed go back to the queue (or to failed when their attempts are
 * spent, since a job that kills its worker every time must stop). Returns how many of each, and
 * the jobs that failed, so the caller can record why on the work they were for.
 */
export async function requeueExpiredJobs(
  db: Db,
  now: Date,
  dbClock: DbClock = DB_NOW,
): Promise<{ requeued: number; failed: number; failedJobs: Pick<JobRecord, 'id' | 'kind' | 'payload'>[] }> {
  // An expired job whose key has a job queued behind it is superseded by that one (see backToQueue).
  // Rows locked in the lock order (lockOrder.ts): the running ones by id, then the queued by key.
  await db.$executeRaw`
    WITH t AS (SELECT ${dbClock()} AS now),
    expired AS (
      SELECT r.id FROM job r, t
      WHERE r.state = 'running' AND r.locked_until < t.now AND r.key IS NOT NULL
        AND EXISTS (SELECT 1 FROM job q WHERE q.key = r.key AND q.state = 'queued')
      ORDER BY r.id FOR UPDATE OF r),
    superseded AS (
      UPDATE job r SET state = 'done', locked_by = NULL, locked_until = NULL, updated_at = ${now},
                       last_error = 'lease expired: superseded by a job queued while it ran'
      FROM expired e WHERE r.id = e.id
      RETURNING r.key, r.priority),
    behind AS (
      SELECT q.id, s.priority FROM job q JOIN superseded s ON q.key = s.key
      WHERE q.state = 'queued' ORDER BY q.${JOB_KEY_ORDER} FOR UPDATE OF q)
    UPDATE job q SET run_at = LEAST(q.run_at, ${now}), priority = GREATEST(q.priority, b.priority)
    FROM behind b WHERE q.id = b.id`;
  const rows = await db.$queryRaw<{ id: bigint; state: string; kind: string; payload: unknown }[]>`
    WITH t AS (SELECT ${dbClock()} AS now),
    expired AS (
      SELECT job.id FROM job, t WHERE job.state = 'running' AND job.locked_until < t.now
      ORDER BY job.id FOR UPDATE OF job)
    UPDATE job SET
      state = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'queued' END,
      last_error = 'lease expired: worker ' || COALESCE(locked_by, '?') || ' stopped or stalled',
      locked_by = NULL, locked_until = NULL, run_at = ${now}, updated_at = ${now}
    FROM expired WHERE job.id = expired.id
    RETURNING job.id, job.state, job.kind, job.payload`;
  const failedJobs = rows
    .filter((r) => r.state === 'failed')
    .map((r) => ({ id: Number(r.id), kind: r.kind, payload: r.payload }));
  return { requeued: rows.length - failedJobs.length, failed: failedJobs.length, failedJobs };
}

/**
 * Extends the lease of jobs this worker still holds (under the epoch in `epochs`, same order, when
 * given); returns the ids it still holds.
 */
export async function heartbeatJobs(
  db: Db,
  input: {
    ids: readonly number[];
    epochs?: readonly number[] | undefined;
    workerId: string;
    leaseMs: number;
    now: Date;
    dbClock?: DbClock;
  },
): Promise<number[]> {
  if (input.ids.length === 0) return [];
  const dbNow = input.dbClock ?? DB_NOW;
  const rows = await db.$queryRaw<{ id: bigint }[]>`
    WITH held AS (${lockHeld(input.ids, input.epochs, input.workerId)})
    UPDATE job SET locked_until = ${dbNow()} + ${msInterval(input.leaseMs)}, updated_at = ${input.now}
    FROM held WHERE job.id = held.id
    RETURNING job.id`;
  return rows.map((r) => Number(r.id));
}

/** Marks a job done. False when this worker no longer holds it (its lease was taken back). */
export async function completeJob(
  db: Db,
  input: { id: number; epoch?: number | undefined; workerId: string; now: Date },
): Promise<boolean> {
  const epochs = input.epoch === undefined ? undefined : [input.epoch];
  return (
    (await completeJobs(db, { ids: [input.id], epochs, workerId: input.workerId, now: input.now })).length ===
    1
  );
}

/**
 * Locks, by id (the lock order's: lockOrder.ts), the jobs of `ids` that `workerId` still runs
 * under the epochs in `epochs` (same order; none or null: any); their ids.
 */
function lockHeld(
  ids: readonly number[],
  epochs: readonly number[] | undefined,
  workerId: string,
): Prisma.Sql {
  const id = ids.map((i) => String(i));
  const epoch = ids.map((_, i) => (epochs?.[i] === undefined ? null : String(epochs[i])));
  return Prisma.sql`
    SELECT job.id FROM job JOIN unnest(${id}::bigint[], ${epoch}::bigint[]) AS h (id, epoch) ON job.id = h.id
    WHERE (h.epoch IS NULL OR job.epoch = h.epoch) AND job.state = 'running' AND job.locked_by = ${workerId}
    ORDER BY job.id FOR UPDATE OF job`;
}

/**
 * completeJob for many jobs in one statement; returns the ids this worker still held. A job queued
 * behind a completed one (same key) is due at once: what it was to wait for is settled now (e.g.
 * call.completed's five-minute safety check, delivered while the call's write-back ran, finds the
 * call written and ends), rather than holding the call's key for minutes.
 */
export async function completeJobs(
  db: Db,
  input: { ids: readonly number[]; epochs?: readonly number[] | undefined; workerId: string; now: Date },
): Promise<number[]> {
  if (input.ids.length === 0) return [];
  const rows = await db.$queryRaw<{ id: bigint }[]>`
    WITH held AS (${lockHeld(input.ids, input.epochs, input.workerId)}),
    done AS (
      UPDATE job SET state = 'done', locked_by = NULL, locked_until = NULL, last_error = NULL,
                     updated_at = ${input.now}
      FROM held WHERE job.id = held.id
      RETURNING job.id, job.key),
    behind AS (
      UPDATE job q SET run_at = ${input.now}, updated_at = ${input.now}
      WHERE q.id IN (
        -- SKIP LOCKED: the inbox and the poller lock queued rows (ON CONFLICT) in their own
        -- order; waiting for one here could deadlock with them. A row skipped keeps its time.
        SELECT b.id FROM job b JOIN done ON b.key = done.key
        WHERE b.state = 'queued' AND b.run_at > ${input.now}
        FOR UPDATE OF b SKIP LOCKED))
    SELECT id FROM done`;
  return rows.map((r) => Number(r.id));
}

export type FailOutcome = 'retrying' | 'failed' | 'lost';

/**
 * Records a failed try: back to the queue after a jittered backoff (or `delayMs`), or 'failed'
 * when not retryable or out of attempts. 'lost' when this worker no longer held the job.
 */
export async function failJob(
  db: Db,
  input: {
    job: Pick<JobRecord, 'id' | 'attempts' | 'maxAttempts'> & { epoch?: number | undefined };
    workerId: string;
    error: string;
    now: Date;
    retryable?: boolean | undefined;
    /** Wait this long instead of the backoff (e.g. a Retry-After). */
    delayMs?: number | undefined;
    random?: (() => number) | undefined;
  },
): Promise<FailOutcome> {
  const retry = (input.retryable ?? true) && input.job.attempts < input.job.maxAttempts;
  const delay = input.delayMs ?? jobRetryDelayMs(input.job.attempts, input.random);
  if (retry) {
    const runAt = new Date(input.now.getTime() + delay);
    const held = heldWhere(input.job.id, input.workerId, input.job.epoch);
    const merged = await backToQueue(db, held, runAt, input.now, () =>
      db.job.updateMany({
        where: held,
        data: {
          state: 'queued',
          runAt,
          lastError: input.error.slice(0, 2000),
          lockedBy: null,
          lockedUntil: null,
          updatedAt: input.now,
        },
      }),
    );
    return merged ? 'retrying' : 'lost';
  }
  const { count } = await db.job.updateMany({
    where: heldWhere(input.job.id, input.workerId, input.job.epoch),
    data: {
      state: retry ? 'queued' : 'failed',
      ...(retry ? { runAt: new Date(input.now.getTime() + delay) } : {}),
      lastError: input.error.slice(0, 2000),
      lockedBy: null,
      lockedUntil: null,
      updatedAt: input.now,
    },
  });
  if (count === 0) return 'lost';
  return retry ? 'retrying' : 'failed';
}

/**
 * Puts a claimed job back without counting the try (e.g. waiting for the request budget or a
 * rate limit). False when this worker no longer held it.
 */
export async function rescheduleJob(
  db: Db,
  input: {
    id: number;
    /** The epoch the caller holds the job under (default: any of this worker's). */
    epoch?: number | undefined;
    workerId: string;
    runAt: Date;
    now: Date;
    /** Why it waits ("CODE: message"), or null when it waits for no error; default unchanged. */
    lastError?: string | null | undefined;
  },
): Promise<boolean> {
  const held = heldWhere(input.id, input.workerId, input.epoch);
  return backToQueue(db, held, input.runAt, input.now, () =>
    db.job.updateMany({
      where: held,
      data: {
        state: 'queued',
        runAt: input.runAt,
        ...(input.lastError !== undefined ? { lastError: input.lastError } : {}),
        attempts: { decrement: 1 },
        lockedBy: null,
        lockedUntil: null,
        updatedAt: input.now,
      },
    }),
  );
}

/**
 * Puts a running job back in the queue. When a job with its key was queued meanwhile (work that
 * arrived while it ran), that one takes over instead: it is newer, and only one job per key may
 * be queued. It is brought forward to the earlier run time and higher priority, and this one is
 * closed as superseded. False when this worker no longer held the job.
 */
async function backToQueue(
  db: Db,
  held: HeldWhere,
  runAt: Date,
  now: Date,
  requeue: () => Promise<{ count: number }>,
): Promise<boolean> {
  const { id } = held;
  for (let attempt = 0; attempt < 2; attempt++) {
    const sibling = await db.$queryRaw<{ id: bigint }[]>`
      UPDATE job q SET run_at = LEAST(q.run_at, ${runAt}), priority = GREATEST(q.priority, r.priority),
                       updated_at = ${now}
      FROM job r
      WHERE r.id = ${id} AND r.state = 'running' AND r.locked_by = ${held.lockedBy}
        AND (${held.epoch ?? null}::bigint IS NULL OR r.epoch = ${held.epoch ?? null}::bigint)
        AND r.key IS NOT NULL AND q.key = r.key AND q.state = 'queued' AND q.id <> r.id
      RETURNING q.id`;
    if (sibling[0]) {
      const { count } = await db.job.updateMany({
        where: held,
        data: {
          state: 'done',
          lastError: `superseded by job ${sibling[0].id}, queued while it ran`,
          lockedBy: null,
          lockedUntil: null,
          updatedAt: now,
        },
      });
      return count === 1;
    }
    try {
      return (await requeue()).count === 1;
    } catch (err) {
      // A sibling was queued between the check and the update: take the superseding path.
      if (!isUniqueViolation(err)) throw err;
    }
  }
  throw new Error(`job ${id}: could not put it back in the queue`);
}

type HeldWhere = { id: bigint; state: 'running'; lockedBy: string; epoch?: bigint };

/** A running job as its holder names it: this worker's, under `epoch` when given. */
function heldWhere(id: number, workerId: string, epoch: number | undefined): HeldWhere {
  return {
    id: BigInt(id),
    state: 'running',
    lockedBy: workerId,
    ...(epoch !== undefined && { epoch: BigInt(epoch) }),
  };
}

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string; cause?: { code?: string } };
  return (
    e.code === 'P2002' || e.code === '23505' || e.cause?.code === '23505' || /unique/i.test(e.message ?? '')
  );
}
