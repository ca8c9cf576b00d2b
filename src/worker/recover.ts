/**
 * On the embedded database only one process at a time can open the data directory (it is
 * locked), so at start every job still marked running and the poll lease belong to a process that
 * died (SIGKILL, OOM, power). They are handed back at once instead of after their leases lapse,
 * which would hold the killed process's calls for up to a minute. Not for PostgreSQL: there
 * another live worker may hold them.
 */
import type { Db } from '../store/database.js';
import { requeueExpiredJobs } from '../store/jobQueue.js';

export async function recoverFromDeadProcess(db: Db, now: Date): ReturnType<typeof requeueExpiredJobs> {
  // Expire the dead holder's leases; the queue's own rule then requeues them (or fails a job whose
  // attempts are spent, so a job that kills its worker every time stops).
  await db.job.updateMany({
    where: { state: 'running' },
    // Long past on any clock (leases run on the database's).
    data: { lockedUntil: new Date(0) },
  });
  await db.leaderLease.deleteMany({});
  return requeueExpiredJobs(db, now);
}
