/**
 * A followup.generated event that arrives while its call's write-back job runs finds the job key
 * taken, so no job is queued for it (the inbox has stored its draft). Once the job is done and the
 * key free, a call whose stored drafts outnumber the follow-ups written gets one more write-back.
 * Checked after the job's completion has committed, so a draft stored before that is always seen.
 */
import { JOB_PRIORITY, writebackJobKey } from '../pipelines/jobs.js';
import type { PipelineDeps } from '../pipelines/deps.js';
import { listFollowupDrafts } from '../store/followupRepo.js';
import { enqueueJob } from '../store/jobQueue.js';
import { getSyncStatus } from '../store/syncStatusRepo.js';

/** Short, so that a draft the CRM keeps refusing cannot spin a tight loop of jobs. */
const LATE_FOLLOWUP_DELAY_MS = 1_000;

export async function queueLateFollowups(deps: PipelineDeps, callId: string): Promise<boolean> {
  if (!deps.mapping.writeback.followups) return false;
  const status = await getSyncStatus(deps.db, callId, deps.crmName);
  if (status?.state !== 'written_back') return false;
  const drafts = await listFollowupDrafts(deps.db, callId);
  // crm_followup_ids holds one CRM id per draft written.
  if (drafts.length <= status.crmFollowupIds.length) return false;
  const now = deps.clock.now();
  const { created } = await enqueueJob(deps.db, {
    kind: 'writeback',
    key: writebackJobKey(callId),
    payload: { callId, reason: 'followup.generated' },
    priority: JOB_PRIORITY.writeback,
    runAt: new Date(now + LATE_FOLLOWUP_DELAY_MS),
    now: new Date(now),
  });
  return created;
}
