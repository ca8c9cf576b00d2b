/**
 * The operator's view of the worker, for `crm-sync status`, GET /status and the metrics: calls
 * by sync state, recent failures with reasons, the Service budget, job queue depth per priority,
 * and the cursor's position and age. Reads only the database (plus in-process budget counters
 * when given), so the CLI can show it without a running worker.
 */
import type { BudgetStats, SlotLedger } from '../budget/types.js';
import type { PlanLimits } from '../budget/plans.js';
import type { CrmName } from '../crm/types.js';
import { budgetPriorityOf } from '../pipelines/jobs.js';
import { getCursor } from '../store/cursorRepo.js';
import type { Db } from '../store/database.js';
import { countHeldJobs, countJobs } from '../store/jobAdmin.js';
import { recentSkips } from '../store/syncEventRepo.js';
import { countSyncStatusByState, recentSyncFailures } from '../store/syncStatusRepo.js';
import type { Clock } from '../util/clock.js';
import { POLL_CURSOR } from './poller.js';

export interface StatusSnapshot {
  generatedAt: string;
  crm: CrmName;
  calls: Record<string, number>;
  recentFailures: {
    callId: string;
    state: string;
    code: string | null;
    message: string | null;
    attempts: number;
    nextAttemptAt: string | null;
    updatedAt: string;
  }[];
  /** Calls skipped most recently, with why (no participant email, no CRM match, failed at the Service...). */
  recentSkips: { callId: string; reason: string | null; at: string }[];
  budget: {
    plan: PlanLimits;
    usedToday: number;
    dailyCap: number | null;
    inLastSecond: number;
    inLastMinute: number;
    pausedUntil: string | null;
    queued?: BudgetStats['queued'];
  };
  jobs: { byState: Record<string, number>; queuedByPriority: Record<string, number> };
  /** Jobs waiting because the CRM rejected the credentials, and the latest reason (what to do). */
  crmCredentials: { heldJobs: number; reason: string | null };
  cursor: {
    position: string | null;
    lastCallCreatedAt: string | null;
    updatedAt: string | null;
    ageSeconds: number | null;
  };
  worker?: Record<string, unknown>;
}

export interface StatusDeps {
  db: Db;
  crm: CrmName;
  clock: Clock;
  limits: PlanLimits;
  ledger: SlotLedger;
  /** In-process counters (queued per priority) when the worker itself answers. */
  budgetStats?: () => BudgetStats;
  worker?: () => Record<string, unknown>;
}

export async function collectStatus(deps: StatusDeps): Promise<StatusSnapshot> {
  const nowMs = deps.clock.now();
  const [calls, failures, skips, jobs, held, cursor, ledger] = await Promise.all([
    countSyncStatusByState(deps.db, { crm: deps.crm }),
    recentSyncFailures(deps.db, { crm: deps.crm, limit: 10 }),
    recentSkips(deps.db, { crm: deps.crm, limit: 5 }),
    countJobs(deps.db),
    countHeldJobs(deps.db, 'CRM_AUTH'),
    getCursor(deps.db, POLL_CURSOR),
    deps.ledger.snapshot(nowMs),
  ]);
  const byState: Record<string, number> = { queued: 0, running: 0, done: 0, failed: 0 };
  const queuedByPriority: Record<string, number> = { live: 0, writeback: 0, backfill: 0 };
  for (const j of jobs) {
    byState[j.state] = (byState[j.state] ?? 0) + j.count;
    if (j.state === 'queued') queuedByPriority[budgetPriorityOf(j.priority)]! += j.count;
  }
  const inProcess = deps.budgetStats?.();
  return {
    generatedAt: new Date(nowMs).toISOString(),
    crm: deps.crm,
    calls,
    recentFailures: failures.map((f) => ({
      callId: f.callId,
      state: f.state,
      code: f.lastErrorCode,
      message: f.lastErrorMessage,
      attempts: f.attempts,
      nextAttemptAt: f.nextAttemptAt?.toISOString() ?? null,
      updatedAt: f.updatedAt.toISOString(),
    })),
    recentSkips: skips.map((s) => ({ callId: s.callId, reason: s.reason, at: s.at.toISOString() })),
    budget: {
      plan: deps.limits,
      usedToday: ledger.usedToday,
      dailyCap: deps.limits.dailyCap,
      inLastSecond: ledger.inLastSecond,
      inLastMinute: ledger.inLastMinute,
      pausedUntil:
        ledger.pausedUntil && ledger.pausedUntil > nowMs ? new Date(ledger.pausedUntil).toISOString() : null,
      ...(inProcess ? { queued: inProcess.queued } : {}),
    },
    jobs: { byState, queuedByPriority },
    crmCredentials: { heldJobs: held.count, reason: held.lastError?.replace(/^CRM_AUTH: /, '') ?? null },
    cursor: {
      position: cursor?.cursor ?? null,
      lastCallCreatedAt: cursor?.lastCallCreatedAt?.toISOString() ?? null,
      updatedAt: cursor?.updatedAt.toISOString() ?? null,
      ageSeconds: cursor ? Math.round((nowMs - cursor.updatedAt.getTime()) / 1000) : null,
    },
    ...(deps.worker ? { worker: deps.worker() } : {}),
  };
}
