/** Queueing jobs (table job; the queue itself is jobQueue.ts). */
import { Prisma } from '../generated/prisma/client.js';
import type { Db } from './database.js';
import { columnNames, unnestRows, type Columns } from './unnest.js';

export interface EnqueueInput {
  kind: string;
  /** At most one queued or running job per key; e.g. 'writeback:call_123'. */
  key?: string | null | undefined;
  payload?: unknown;
  priority: number;
  /** Not before (default now). */
  runAt?: Date | undefined;
  maxAttempts?: number | undefined;
  now: Date;
}

/**
 * Adds a job, joining the caller's transaction when `db` is one. When a queued job has the same
 * key, none is added (`created: false`, its id returned) and that one is raised to the higher
 * priority and the earlier run time of the two (and takes a newer analysed copy of its call, see
 * NEWER_CALL_ON_CONFLICT). A job with the key that is running does not
 * count: the new one queues behind it (claims skip a key that has a running job), so work that
 * arrives mid-run is never dropped.
 */
export async function enqueueJob(db: Db, input: EnqueueInput): Promise<{ id: number; created: boolean }> {
  const [one] = await enqueueJobs(db, [input]);
  return one!;
}

/**
 * enqueueJob for many jobs (distinct keys) in one statement; results in the order of `inputs`.
 * The poller queues a page's jobs this way.
 */
export async function enqueueJobs(
  db: Db,
  inputs: readonly EnqueueInput[],
): Promise<{ id: number; created: boolean }[]> {
  if (inputs.length === 0) return [];
  const keys = inputs.flatMap((i) => (i.key ? [i.key] : []));
  if (new Set(keys).size !== keys.length) throw new Error('enqueueJobs: job keys must be distinct');
  // Queued rows of the keys are locked (ON CONFLICT) in JOB_KEY_ORDER, the lock order's (lockOrder.ts).
  const rows = await db.$queryRaw<{ id: bigint; key: string | null; created: boolean }[]>`
    ${jobsInsertFrom(unnestRows(JOB_COLUMNS, [...inputs].sort(keyOrder).map(jobValues), 'input'))}`;
  // Keyed jobs are matched by key; unkeyed ones are always new, and come back in insert order.
  const byKey = new Map(rows.filter((r) => r.key !== null).map((r) => [r.key, r]));
  const unkeyed = rows.filter((r) => r.key === null);
  return inputs.map((input) => {
    const row = input.key ? byKey.get(input.key) : unkeyed.shift();
    if (row) return { id: Number(row.id), created: row.created };
    throw new Error(`job key ${input.key ?? null}: could not enqueue (the key kept changing hands)`);
  });
}

/** Keyed jobs by key, byte-wise as JOB_KEY_ORDER (ASCII keys); unkeyed ones after them, in their order. */
function keyOrder(a: EnqueueInput, b: EnqueueInput): number {
  if (!a.key || !b.key) return (a.key ? 0 : 1) - (b.key ? 0 : 1);
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** The columns of a source of new jobs (jobsInsertFrom), one row each from jobValues. */
export const JOB_COLUMNS: Columns = [
  ['kind', 'text'],
  ['key', 'text'],
  ['payload', 'jsonb'],
  ['priority', 'int'],
  ['run_at', 'timestamptz'],
  ['max_attempts', 'int'],
  ['created_at', 'timestamptz'],
  ['updated_at', 'timestamptz'],
];

export function jobValues(input: EnqueueInput): unknown[] {
  return [
    input.kind,
    input.key ?? null,
    input.payload ?? {},
    input.priority,
    input.runAt ?? input.now,
    input.maxAttempts ?? 8,
    input.now,
    input.now,
  ];
}

/**
 * A job already queued keeps its payload, with one exception. Jobs carry the Service's copy of
 * their call (`payload.call`); call.completed queues a write-back delayed as a safety check with a
 * copy that says completed, and when analysis.ready (or a poll) then joins that job, its copy says
 * analysed. Kept stale, the write-back would read the call from the Service again: one request
 * per call more than needed. So a newer copy that says analysed replaces the queued one, in the
 * same statement (a later statement could find the job claimed already).
 */
const NEWER_CALL_ON_CONFLICT = Prisma.sql`CASE WHEN EXCLUDED.payload #>> '{call,status}' = 'analyzed'
  THEN jsonb_set(job.payload, '{call}', EXCLUDED.payload -> 'call') ELSE job.payload END`;

/**
 * The statement that queues the jobs of `source` (a relation with JOB_COLUMNS, distinct
 * keys), by enqueueJob's rule; returns id, key and created. Also one part of the webhook inbox's
 * single statement (src/store/inboxRound.ts).
 */
export function jobsInsertFrom(source: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO job (${columnNames(JOB_COLUMNS)})
    SELECT ${columnNames(JOB_COLUMNS)} FROM ${source}
    ON CONFLICT (key) WHERE (state = 'queued'::text) DO UPDATE SET
      priority = GREATEST(job.priority, EXCLUDED.priority),
      run_at = LEAST(job.run_at, EXCLUDED.run_at),
      payload = ${NEWER_CALL_ON_CONFLICT},
      updated_at = EXCLUDED.updated_at
    RETURNING id, key, (xmax = 0) AS created`;
}
