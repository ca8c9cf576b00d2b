/**
 * The worker's job kinds, keys and payloads. Job priority is the integer of the job table
 * (JOB_PRIORITY, higher first); the Service budget has the three named priorities.
 */
import type { Priority } from '../budget/types.js';
import { JOB_PRIORITY } from './jobRecord.js';
import type { Call } from '../service/types.js';

export { JOB_PRIORITY };

export type JobKind = 'context' | 'writeback';

export function budgetPriorityOf(jobPriority: number): Priority {
  if (jobPriority >= JOB_PRIORITY.live) return 'live';
  if (jobPriority >= JOB_PRIORITY.writeback) return 'writeback';
  return 'backfill';
}

export interface ContextJobPayload {
  callId: string;
  /** The call as the webhook carried it, so the job needs no GET /v1/calls/:id. */
  call?: Call | null | undefined;
  eventId?: string | undefined;
  /** When the webhook arrived (epoch ms), for the webhook-to-context latency metric. */
  receivedAt?: number | undefined;
}

export interface WritebackJobPayload {
  callId: string;
  /** Why the job exists: an event type, 'poll', 'backfill' or 'replay'. */
  reason: string;
  /** The call as a webhook or list page carried it (may be stale; re-read when it matters). */
  call?: Call | null | undefined;
  /** A follow-up draft carried by a followup.generated event. */
  followup?: Record<string, unknown> | null | undefined;
  eventId?: string | undefined;
}

export interface JobSpec {
  kind: JobKind;
  key: string;
  priority: number;
  payload: ContextJobPayload | WritebackJobPayload;
  /** Delay before the job may run (ms). */
  delayMs?: number | undefined;
}

/** Work for a call in progress (a context push): it goes ahead of bulk work wherever they meet. */
export function isLiveJob(job: { priority: number }): boolean {
  return budgetPriorityOf(job.priority) === 'live';
}

export const contextJobKey = (callId: string) => `context:${callId}`;
export const writebackJobKey = (callId: string) => `writeback:${callId}`;
