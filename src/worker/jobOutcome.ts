/**
 * Applies a job try's result to the job table and the sync-status table: done, later (not a
 * failure), or an error whose class decides retry, wait or fail (src/pipelines/outcome.ts).
 */
import { CrmAuthError } from '../crm/errors.js';
import type { CrmName } from '../crm/types.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { outcomeOf } from '../pipelines/outcome.js';
import type { Db } from '../store/database.js';
import { completeJobs, failJob, rescheduleJob, type JobRecord } from '../store/jobQueue.js';
import { endSync } from '../store/syncMoves.js';
import { getSyncStatus, recordSyncError } from '../store/syncStatusRepo.js';
import type { CrmCredentialMonitor } from './crmCredentials.js';

export type TryResult =
  | { kind: 'done'; detail: string }
  | { kind: 'later'; delayMs: number; detail: string }
  | { kind: 'error'; error: unknown };

/** Unauthorized: the key or token must be fixed by a person; look again in five minutes at the latest. */
const STOP_WAIT_MS = 5 * 60_000;

export interface OutcomeDeps {
  db: Db;
  crm: CrmName;
  workerId: string;
  logger: Logger;
  metrics: Metrics;
  random?: () => number;
  /** Told of rejected CRM credentials; answers what to record (which credential, what to do). */
  credentials?: Pick<CrmCredentialMonitor, 'rejected'> | undefined;
}

export async function applyTryResult(
  deps: OutcomeDeps,
  job: JobRecord,
  callId: string,
  result: TryResult,
  nowMs: number,
): Promise<void> {
  const now = new Date(nowMs);
  const { db, workerId } = deps;
  const log = deps.logger.child({ jobId: job.id, callId, kind: job.kind });
  if (result.kind === 'done') {
    await applyDone(deps, [{ job, detail: result.detail }], nowMs);
    return;
  }
  if (result.kind === 'later') {
    const runAt = new Date(nowMs + result.delayMs);
    await rescheduleJob(db, { id: job.id, epoch: job.epoch, workerId, runAt, now, lastError: null });
    deps.metrics.jobs.inc({ kind: job.kind, outcome: 'later' });
    return;
  }
  const outcome = outcomeOf(result.error, nowMs);
  if (outcome.kind === 'wait' || outcome.kind === 'stop') {
    const delayMs = outcome.kind === 'stop' ? STOP_WAIT_MS : outcome.delayMs;
    // Rejected CRM credentials: record which one and what to do; the monitor releases the job
    // as soon as they work again (src/worker/crmCredentials.ts), STOP_WAIT_MS is the fallback.
    const message =
      result.error instanceof CrmAuthError && deps.credentials
        ? deps.credentials.rejected(result.error)
        : outcome.message;
    const runAt = new Date(nowMs + delayMs);
    const lastError = `${outcome.code}: ${message}`;
    // Not held any more (its lease was taken back): the call is another run's, and its error
    // would land on that run's work (as failJob's 'lost' below).
    if (!(await rescheduleJob(db, { id: job.id, epoch: job.epoch, workerId, runAt, now, lastError }))) {
      deps.metrics.jobs.inc({ kind: job.kind, outcome: 'lost' });
      return;
    }
    await noteError(deps, callId, outcome.code, message, runAt, now);
    deps.metrics.jobs.inc({ kind: job.kind, outcome: 'waiting' });
    const level = outcome.kind === 'stop' ? 'error' : 'info';
    log[level]({ code: outcome.code, waitMs: delayMs }, message);
    return;
  }
  const fate = await failJob(db, {
    job,
    workerId,
    error: `${outcome.code}: ${outcome.message}`,
    now,
    retryable: outcome.kind === 'retry',
    delayMs: outcome.kind === 'retry' ? outcome.delayMs : undefined,
    random: deps.random,
  });
  deps.metrics.jobs.inc({ kind: job.kind, outcome: fate === 'retrying' ? 'retry' : fate });
  if (fate === 'lost') return;
  if (fate === 'retrying') {
    const fresh = await db.job.findUnique({ where: { id: BigInt(job.id) }, select: { runAt: true } });
    await noteError(deps, callId, outcome.code, outcome.message, fresh?.runAt ?? null, now);
    log.warn({ code: outcome.code, attempts: job.attempts }, `will retry: ${outcome.message}`);
    return;
  }
  // Out of attempts, or not retryable. A context push that failed does not fail the call's sync.
  log.error({ code: outcome.code, attempts: job.attempts }, `job failed: ${outcome.message}`);
  if (job.kind === 'writeback') await markFailed(deps, callId, outcome.code, outcome.message, now);
  else await noteError(deps, callId, outcome.code, outcome.message, null, now);
}

/** Done tries, all closed in one statement (a write-back batch's are many). */
export async function applyDone(
  deps: OutcomeDeps,
  done: readonly { job: JobRecord; detail: string }[],
  nowMs: number,
): Promise<void> {
  const ids = done.map((d) => d.job.id);
  const epochs = done.map((d) => d.job.epoch);
  await completeJobs(deps.db, { ids, epochs, workerId: deps.workerId, now: new Date(nowMs) });
  for (const { job, detail } of done) {
    deps.metrics.jobs.inc({ kind: job.kind, outcome: 'done' });
    deps.logger.debug({ jobId: job.id, kind: job.kind, detail }, 'job done');
  }
}

async function noteError(
  deps: OutcomeDeps,
  callId: string,
  code: string,
  message: string,
  nextAttemptAt: Date | null,
  now: Date,
): Promise<void> {
  const status = await getSyncStatus(deps.db, callId, deps.crm);
  if (!status) return;
  await recordSyncError(deps.db, { callId, crm: deps.crm, code, message, nextAttemptAt, now });
}

/**
 * Jobs failed by the queue itself (their lease lapsed on the last attempt: the worker died or
 * stalled each time): record it on the call, or it would wait in a working state forever.
 */
export async function recordExhaustedJobs(
  deps: OutcomeDeps,
  jobs: { id: number; kind: string; payload: unknown }[],
  now: Date,
): Promise<void> {
  for (const job of jobs) {
    const callId = (job.payload as { callId?: string } | null)?.callId;
    if (!callId) continue;
    deps.metrics.jobs.inc({ kind: job.kind, outcome: 'failed' });
    const message = 'every attempt ended with the worker stopping or stalling before it finished';
    deps.logger.error({ jobId: job.id, callId, kind: job.kind }, `job failed: ${message}`);
    if (job.kind === 'writeback') await markFailed(deps, callId, 'JOB_LEASE_EXHAUSTED', message, now);
    else await noteError(deps, callId, 'JOB_LEASE_EXHAUSTED', message, null, now);
  }
}

async function markFailed(deps: OutcomeDeps, callId: string, code: string, message: string, now: Date) {
  const status = await getSyncStatus(deps.db, callId, deps.crm);
  if (!status) return;
  await endSync(deps.db, { callId, crm: deps.crm, from: status.state, to: 'failed', code, message, now });
}
