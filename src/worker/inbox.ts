/**
 * The database-backed webhook inbox. One short transaction stores the delivery once (by event
 * id), records the call as discovered and enqueues the work the event causes; the receiver
 * answers 2xx only after it commits. The work itself runs later in the job runner.
 */
import type { CrmName } from '../crm/types.js';
import type { WebhookInbox, InboxRecord } from '../http/types.js';
import { callFactsOf } from '../pipelines/callFacts.js';
import { jobsForEvent } from '../pipelines/route.js';
import type { JobSpec } from '../pipelines/jobs.js';
import { parseWebhookEvent } from '../service/events.js';
import type { Call } from '../service/types.js';
import { inTransaction, type Db } from '../store/database.js';
import { saveFollowupDrafts, type DraftInput } from '../store/followupRepo.js';
import { enqueueJob } from '../store/jobQueue.js';
import { upsertDiscovered } from '../store/syncStatusRepo.js';
import { insertWebhookOnce, recordRejectedWebhook } from '../store/webhookInboxRepo.js';
import { refreshQueuedCall } from './queuedCall.js';

export function createDbInbox(deps: {
  db: Db;
  crm: CrmName;
  /** Told after commit which job kinds were enqueued, so idle runners wake at once. */
  onEnqueued?: (kinds: Set<string>) => void;
}): WebhookInbox {
  return {
    async store(e: InboxRecord) {
      const receivedAt = new Date(e.receivedAt);
      if (e.outcome === 'rejected' || !e.eventId || !e.type) {
        await recordRejectedWebhook(deps.db, {
          rawBody: e.rawBody,
          reason: e.rejectReason ?? 'not an event',
          signatureOk: true,
          receivedAt,
          eventId: e.eventId,
          type: e.type,
          callId: e.callId,
        });
        return { duplicate: false };
      }
      // The receiver already validated the body; parsing again here keeps this module honest.
      const event = parseWebhookEvent(JSON.parse(e.rawBody));
      const jobs: JobSpec[] = jobsForEvent(event, e.receivedAt);
      const duplicate = await inTransaction(deps.db, async (tx) => {
        const stored = await insertWebhookOnce(tx, {
          eventId: event.id,
          type: event.type,
          callId: event.data.call_id,
          rawBody: e.rawBody,
          receivedAt,
          // Routing (below, same transaction) is the inbox's whole job: stored as processed.
          processedAt: receivedAt,
        });
        if (stored.duplicate) return true;
        const call = (event.data.call ?? null) as Call | null;
        await upsertDiscovered(tx, {
          callId: event.data.call_id,
          crm: deps.crm,
          ...(call ? { call: callFactsOf(call) } : {}),
          now: receivedAt,
        });
        // The draft is kept now, not only in the job's payload: while a write-back job of this
        // call runs (or a dead worker's lease holds it) no second job is queued to carry it.
        if (event.data.followup) {
          await saveFollowupDrafts(tx, event.data.call_id, [event.data.followup as DraftInput], receivedAt);
        }
        for (const job of jobs) {
          const { id, created } = await enqueueJob(tx, {
            kind: job.kind,
            key: job.key,
            payload: job.payload,
            priority: job.priority,
            runAt: new Date(e.receivedAt + (job.delayMs ?? 0)),
            now: receivedAt,
          });
          if (!created) await refreshQueuedCall(tx, id, job);
        }
        return false;
      });
      if (!duplicate && jobs.length > 0) deps.onEnqueued?.(new Set(jobs.map((j) => j.kind)));
      return { duplicate };
    },
  };
}
