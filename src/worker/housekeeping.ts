/**
 * Keeps the worker's tables from growing without end: webhook deliveries (kept 30 days for
 * inspection and replay) and finished jobs (kept 7 days). Failed jobs and the sync-status table
 * are never pruned; they are the operator's record.
 */
import type { Db } from '../store/database.js';
import { pruneDoneJobs } from '../store/jobAdmin.js';
import { pruneWebhookInbox } from '../store/webhookInboxRepo.js';

export const KEEP_WEBHOOKS_MS = 30 * 24 * 3_600_000;
export const KEEP_DONE_JOBS_MS = 7 * 24 * 3_600_000;

export async function pruneOldRows(db: Db, nowMs: number): Promise<{ webhooks: number; jobs: number }> {
  const webhooks = await pruneWebhookInbox(db, new Date(nowMs - KEEP_WEBHOOKS_MS));
  const jobs = await pruneDoneJobs(db, new Date(nowMs - KEEP_DONE_JOBS_MS));
  return { webhooks, jobs };
}
