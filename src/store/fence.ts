/**
 * Fencing: a job run's lease as a token its writes carry. Every claim of a job gives it a new
 * epoch (jobQueue.ts); a run's state moves, follow-up claims and settles check in the same
 * statement that the job is still running under that epoch, so a run that lost its lease (taken
 * back after it lapsed, claimed again, handed back at shutdown) changes nothing: the statement
 * says so (LeaseLostError) and the run stops. Its side effects outside the database (Service and
 * CRM requests) are stopped before they start by the run's AbortSignal (src/worker/jobRun.ts).
 */
import { Prisma } from '../generated/prisma/client.js';

/** The lease a run holds: its job and the epoch the claim gave it. */
export interface Fence {
  jobId: number;
  epoch: number;
}

/** SQL, true while the run of `fence` still holds its job; true when there is no fence (no job). */
export function fenceHolds(fence: Fence | undefined): Prisma.Sql {
  if (!fence) return Prisma.sql`true`;
  return heldSql(Prisma.sql`${BigInt(fence.jobId)}::bigint`, Prisma.sql`${BigInt(fence.epoch)}::bigint`);
}

/**
 * SQL, true while job `jobId` runs under `epoch` (expressions). The row is share-locked until the
 * statement's transaction ends, so no claim can give the job a new epoch while the write that
 * checked it is under way.
 */
export function heldSql(jobId: Prisma.Sql, epoch: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`EXISTS (SELECT 1 FROM job WHERE job.id = ${jobId} AND job.epoch = ${epoch}
                            AND job.state = 'running' FOR SHARE)`;
}

/** The fence's columns for a claim it takes (job, epoch); nulls without a fence. */
export function fenceValues(fence: Fence | undefined): [bigint | null, bigint | null] {
  return fence ? [BigInt(fence.jobId), BigInt(fence.epoch)] : [null, null];
}

/** A run's lease was lost: whatever it was about to do was not done. */
export class LeaseLostError extends Error {
  readonly code = 'JOB_LEASE_LOST';
  constructor(
    readonly fence: Fence | undefined,
    what: string,
  ) {
    super(
      `job ${fence?.jobId ?? '?'} (lease epoch ${fence?.epoch ?? '?'}) no longer holds its lease: ${what} not done`,
    );
    this.name = 'LeaseLostError';
  }
}
