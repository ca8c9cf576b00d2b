/**
 * When an event or a poll finds a write-back already queued for its call (call.completed queues
 * one as a delayed safety check), enqueueJob keeps the queued job's payload. That payload's copy
 * of the call is stale (status completed), so the write-back would re-read the call: one Service
 * request per call more than needed. When the newer copy says analysed, it goes onto the queued job.
 */
import type { JobSpec, WritebackJobPayload } from '../pipelines/jobs.js';
import type { Db } from '../store/database.js';

export async function refreshQueuedCall(db: Db, jobId: number, spec: JobSpec): Promise<void> {
  const call = (spec.payload as WritebackJobPayload).call;
  if (spec.kind !== 'writeback' || call?.status !== 'analyzed') return;
  // Only a job still queued: a running one has read its payload already.
  await db.$executeRaw`
    UPDATE job SET payload = jsonb_set(payload, '{call}', ${JSON.stringify(call)}::jsonb)
    WHERE id = ${jobId} AND state = 'queued'`;
}
