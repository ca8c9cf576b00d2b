/**
 * The operator's view of the worker, for `crm-sync status`, GET /status and the metrics: calls by
 * state, failures, budget and its forecast, queue depth, the cursor and drift warnings. Reads only the
 * database (plus in-process budget counters when given), so the CLI can show it without a worker.
 */
import {
  backfillShare,
  projectDailyCap,
  projectFinish,
  requestsPerCall,
  type CapProjection,
  type RequestsPerCall,
} from '../budget/forecast.js';
import type { BudgetStats, SlotLedger } from '../budget/types.js';
import type { PlanLimits } from '../budget/plans.js';
import type { CrmName } from '../crm/types.js';
import type { DriftThresholds } from '../config/drift.js';
import { detectDrift, type DriftWarning } from '../drift/detectors.js';
import { readDriftFacts } from '../drift/facts.js';
import { budgetPriorityOf } from '../store/jobKinds.js';
import { getCursor } from '../store/cursorRepo.js';
import type { Db } from '../store/database.js';
import { countDueBackfillJobs, requestHistory } from '../store/forecastQueries.js';
import { countHeldJobs, countJobs } from '../store/jobAdmin.js';
import { recentSkips } from '../store/syncEventRepo.js';
import { countSyncStatusByState, recentSyncFailures } from '../store/syncStatus/queries.js';
import type { Clock } from '../util/clock.js';
import { collectCrmStanding, type CrmStanding } from './crmStanding.js';
import { POLL_CURSOR } from '../sync/cursors.js';

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
  /**
   * Jobs waiting because the Service rejected SERVICE_API_KEY, and the latest reason: read from
   * the database, so `crm-sync status` without a worker to ask (PostgreSQL) sees it too.
   */
  serviceKey?: { heldJobs: number; reason: string | null };
  cursor: {
    position: string | null;
    lastCallCreatedAt: string | null;
    updatedAt: string | null;
    ageSeconds: number | null;
  };
  forecast: {
    /** When the daily cap runs out at the last minute's pace (src/budget/forecast.ts). */
    dailyCap: { kind: CapProjection['kind']; at: string | null };
    /**
     * When the jobs due at backfill priority (store/forecastQueries.ts) would be done, at the
     * plan's rate and daily cap less the live reserve; null when none are due (or the reserves
     * were not given).
     */
    backfill: {
      queuedCalls: number;
      requestsPerCall: RequestsPerCall;
      requests: number;
      finishesAt: string;
    } | null;
  };
  /** Silence and drift warnings raised now (src/drift/detectors.ts); empty when all is well. */
  drift: DriftWarning[];
  /** Fields calls are written without, and calls a CRM rule refused (src/ops/crmStanding.ts). */
  crmStanding?: CrmStanding;
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
  /** The budget's live reserves (config), for the backfill ETA; without them it is left out. */
  reserves?: { liveWindowReserve: number; liveDailyReserve: number };
  /** Drift thresholds (config); without them no drift warnings are judged. */
  drift?: DriftThresholds;
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
  const keyHeld = await countHeldJobs(deps.db, 'SERVICE_UNAUTHORIZED');
  const byState: Record<string, number> = { queued: 0, running: 0, done: 0, failed: 0 };
  const queuedByPriority: Record<string, number> = { live: 0, writeback: 0, backfill: 0 };
  for (const j of jobs) {
    byState[j.state] = (byState[j.state] ?? 0) + j.count;
    if (j.state === 'queued') queuedByPriority[budgetPriorityOf(j.priority)]! += j.count;
  }
  const inProcess = deps.budgetStats?.();
  const [forecast, drift, crmStanding] = await Promise.all([
    forecastFrom(deps, nowMs, ledger),
    judgeDrift(deps, nowMs),
    collectCrmStanding(deps.db, deps.crm),
  ]);
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
    serviceKey: {
      heldJobs: keyHeld.count,
      reason: keyHeld.lastError?.replace(/^SERVICE_UNAUTHORIZED: /, '') ?? null,
    },
    cursor: {
      position: cursor?.cursor ?? null,
      lastCallCreatedAt: cursor?.lastCallCreatedAt?.toISOString() ?? null,
      updatedAt: cursor?.updatedAt.toISOString() ?? null,
      ageSeconds: cursor ? Math.round((nowMs - cursor.updatedAt.getTime()) / 1000) : null,
    },
    forecast,
    drift,
    crmStanding,
    ...(deps.worker ? { worker: deps.worker() } : {}),
  };
}

async function judgeDrift(deps: StatusDeps, nowMs: number): Promise<DriftWarning[]> {
  const thresholds = deps.drift;
  if (!thresholds) return [];
  const facts = await readDriftFacts(deps.db, { crm: deps.crm, nowMs, thresholds });
  return detectDrift(facts, thresholds, nowMs);
}

/** The forecast's two times, for the metrics: a cap already reached ran out now. */
export function forecastTimes(
  forecast: StatusSnapshot['forecast'],
  nowMs: number,
): { capRunsOutAt: Date | null; backfillFinishesAt: Date | null } {
  const cap = forecast.dailyCap;
  return {
    capRunsOutAt: cap.at ? new Date(cap.at) : cap.kind === 'reached' ? new Date(nowMs) : null,
    backfillFinishesAt: forecast.backfill ? new Date(forecast.backfill.finishesAt) : null,
  };
}

/** The forecast alone (for the metrics): the ledger and the backfill queue, nothing else. */
export async function collectForecast(deps: StatusDeps): Promise<StatusSnapshot['forecast']> {
  const nowMs = deps.clock.now();
  return forecastFrom(deps, nowMs, await deps.ledger.snapshot(nowMs));
}

async function forecastFrom(
  deps: StatusDeps,
  nowMs: number,
  ledger: { usedToday: number; inLastMinute: number },
): Promise<StatusSnapshot['forecast']> {
  const cap = projectDailyCap({
    usedToday: ledger.usedToday,
    dailyCap: deps.limits.dailyCap,
    inLastMinute: ledger.inLastMinute,
    nowMs,
  });
  return {
    dailyCap: { kind: cap.kind, at: cap.kind === 'runs_out' ? cap.at.toISOString() : null },
    backfill: await backfillForecast(deps, nowMs, ledger.usedToday),
  };
}

async function backfillForecast(
  deps: StatusDeps,
  nowMs: number,
  usedToday: number,
): Promise<StatusSnapshot['forecast']['backfill']> {
  if (!deps.reserves) return null;
  const queuedCalls = await countDueBackfillJobs(deps.db, nowMs);
  if (queuedCalls === 0) return null;
  const perCall = requestsPerCall(await requestHistory(deps.db, { crm: deps.crm, nowMs }));
  const requests = Math.ceil(queuedCalls * perCall.value);
  const finishesAt = projectFinish({
    requests,
    nowMs,
    usedToday,
    share: backfillShare(deps.limits, deps.reserves),
  });
  return { queuedCalls, requestsPerCall: perCall, requests, finishesAt: finishesAt.toISOString() };
}
