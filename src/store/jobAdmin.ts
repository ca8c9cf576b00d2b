import { Prisma } from '../generated/prisma/client.js';
import type { Db } from './database.js';
import { toJob, type JobRecord, type JobRow, type JobState } from './jobRecord.js';

/** Operator-side views and repairs of the job queue (status, replay, cleanup). */

export interface JobCount {
  state: JobState;
  priority: number;
  count: number;
}

/** Jobs per state and priority (only combinations that exist), highest priority first. */
export async function countJobs(db: Db, options: { kind?: string } = {}): Promise<JobCount[]> {
  const groups = await db.job.groupBy({
    by: ['state', 'priority'],
    where: options.kind ? { kind: options.kind } : {},
    _count: { _all: true },
    orderBy: [{ priority: 'desc' }, { state: 'asc' }],
  });
  return groups.map((g) => ({ state: g.state as JobState, priority: g.priority, count: g._count._all }));
}

export async function getJob(db: Db, id: number): Promise<JobRecord | null> {
  const rows = await db.$queryRaw<JobRow[]>`SELECT * FROM job WHERE id = ${BigInt(id)}`;
  return rows[0] ? toJob(rows[0]) : null;
}

/** Failed jobs, most recent first. */
export async function listFailedJobs(
  db: Db,
  options: { kind?: string; limit?: number } = {},
): Promise<JobRecord[]> {
  const kindFilter = options.kind ? Prisma.sql`AND kind = ${options.kind}` : Prisma.empty;
  const rows = await db.$queryRaw<JobRow[]>`
    SELECT * FROM job WHERE state = 'failed' ${kindFilter}
    ORDER BY updated_at DESC, id DESC LIMIT ${options.limit ?? 50}`;
  return rows.map(toJob);
}

/**
 * Puts failed jobs back in the queue with fresh attempts, due now. Of several failed jobs with one
 * key only the latest is replayed, and none whose key already has an unfinished job.
 */
export async function replayFailedJobs(
  db: Db,
  input: { now: Date; kind?: string | undefined; ids?: readonly number[] | undefined },
): Promise<number> {
  const kindFilter = input.kind ? Prisma.sql`AND f.kind = ${input.kind}` : Prisma.empty;
  const idFilter =
    input.ids && input.ids.length > 0
      ? Prisma.sql`AND f.id IN (${Prisma.join(input.ids.map((id) => BigInt(id)))})`
      : Prisma.empty;
  return db.$executeRaw`
    UPDATE job SET state = 'queued', attempts = 0, run_at = ${input.now}, updated_at = ${input.now}
    WHERE id IN (
      SELECT DISTINCT ON (COALESCE(f.key, f.id::text)) f.id FROM job f
      WHERE f.state = 'failed' ${kindFilter} ${idFilter}
        AND (f.key IS NULL OR NOT EXISTS (
          SELECT 1 FROM job u WHERE u.key = f.key AND u.state IN ('queued', 'running')))
      ORDER BY COALESCE(f.key, f.id::text), f.updated_at DESC, f.id DESC
    )`;
}

/** Deletes done jobs last touched before `before` (failed ones stay for the operator). */
export async function pruneDoneJobs(db: Db, before: Date): Promise<number> {
  const { count } = await db.job.deleteMany({ where: { state: 'done', updatedAt: { lt: before } } });
  return count;
}

/** Queued jobs waiting because of error `code` (their last error starts with "CODE:"). */
export async function countHeldJobs(
  db: Db,
  code: string,
): Promise<{ count: number; lastError: string | null }> {
  const where = { state: 'queued', lastError: { startsWith: `${code}:` } };
  const [count, latest] = await Promise.all([
    db.job.count({ where }),
    db.job.findFirst({ where, orderBy: { updatedAt: 'desc' }, select: { lastError: true } }),
  ]);
  return { count, lastError: latest?.lastError ?? null };
}

/** Makes queued jobs held back by error `code` due now (its cause is gone); returns how many. */
export async function releaseHeldJobs(db: Db, input: { code: string; now: Date }): Promise<number> {
  const { count } = await db.job.updateMany({
    where: { state: 'queued', runAt: { gt: input.now }, lastError: { startsWith: `${input.code}:` } },
    data: { runAt: input.now, updatedAt: input.now },
  });
  return count;
}
