/**
 * Which work an event or a discovered call causes. Pure: the inbox and the poller enqueue what
 * these return inside their own transactions.
 */
import type { Call } from '../service/types.js';
import type { WebhookEvent } from '../service/events.js';
import { ACTIVE_SYNC_STATES, type SyncState } from '../sync/states.js';
import { callPhaseOf } from './callStatus.js';
import { JOB_PRIORITY, contextJobKey, writebackJobKey, type JobSpec } from '../store/jobKinds.js';

/**
 * After call.completed the analysis usually follows within minutes and announces itself with
 * analysis.ready; this check runs anyway in case that webhook is lost.
 */
export const ANALYSIS_SAFETY_CHECK_MS = 5 * 60_000;

/**
 * The call states in which an event's jobs are still needed (null: in any). call.completed's
 * safety check has nothing to check once the call is written, skipped or failed (a replay starts
 * it again), e.g. when the Service redelivers call.completed after an outage, after the write-back.
 * The inbox applies it inside its statement (src/store/inboxRound.ts).
 */
export function statesNeedingWork(event: Pick<WebhookEvent, 'type'>): readonly SyncState[] | null {
  return event.type === 'call.completed' ? ACTIVE_SYNC_STATES : null;
}

export function jobsForEvent(event: WebhookEvent, receivedAt: number): JobSpec[] {
  const callId = event.data.call_id;
  const call = (event.data.call ?? null) as Call | null;
  switch (event.type) {
    case 'call.started':
      return [
        {
          kind: 'context',
          key: contextJobKey(callId),
          priority: JOB_PRIORITY.live,
          payload: { callId, call, eventId: event.id, receivedAt },
        },
      ];
    case 'analysis.ready':
      return [writeback(callId, event.type, call, event.id, JOB_PRIORITY.writeback, 0)];
    case 'call.completed':
      return [
        writeback(callId, event.type, call, event.id, JOB_PRIORITY.writeback, ANALYSIS_SAFETY_CHECK_MS),
      ];
    case 'followup.generated':
      return [
        {
          ...writeback(callId, event.type, call, event.id, JOB_PRIORITY.writeback, 0),
          payload: {
            callId,
            reason: event.type,
            call,
            eventId: event.id,
            followup: (event.data.followup ?? null) as Record<string, unknown> | null,
          },
        },
      ];
    default:
      // transcript.ready and unknown types: stored, nothing to do.
      return [];
  }
}

/**
 * Work for a call found by the poller or a backfill (no webhook seen, or not yet). Every call gets
 * a job, so none stays `discovered`: a failed or cancelled call's write-back job skips it (no
 * Service request), an unknown status waits like an unanalysed call (src/pipelines/callStatus.ts).
 */
export function jobsForDiscoveredCall(call: Call, reason: 'poll' | 'backfill'): JobSpec[] {
  const priority = JOB_PRIORITY.backfill;
  const phase = callPhaseOf(call.status);
  if (phase === 'live') {
    // A live call whose call.started webhook was lost still gets its context, at live priority.
    return [
      {
        kind: 'context',
        key: contextJobKey(call.id),
        priority: JOB_PRIORITY.live,
        payload: { callId: call.id, call },
      },
      writeback(call.id, reason, call, undefined, priority, ANALYSIS_SAFETY_CHECK_MS),
    ];
  }
  const delay = phase === 'analyzed' || phase === 'ended' ? 0 : ANALYSIS_SAFETY_CHECK_MS;
  return [writeback(call.id, reason, call, undefined, priority, delay)];
}

function writeback(
  callId: string,
  reason: string,
  call: Call | null,
  eventId: string | undefined,
  priority: number,
  delayMs: number,
): JobSpec {
  return {
    kind: 'writeback',
    key: writebackJobKey(callId),
    priority,
    payload: { callId, reason, call, eventId },
    delayMs,
  };
}
