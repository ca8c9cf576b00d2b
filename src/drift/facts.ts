/**
 * Reads the facts the drift detectors judge (detectors.ts) from tables the worker already keeps:
 * sync_status, sync_event (why a call was skipped) and webhook_inbox (verified deliveries).
 * Every read is bounded by an indexed time column, so the periodic check stays cheap.
 */
import type { CrmName } from '../crm/types.js';
import { ANALYSIS_GIVE_UP_MS } from '../pipelines/analysisWait.js';
import { Prisma } from '../generated/prisma/client.js';
import type { Db } from '../store/database.js';
import { countSyncStatusByState } from '../store/syncStatusRepo.js';
import { lastVerifiedWebhookAt } from '../store/syncStatusQueries.js';
import { NO_MATCH_REASON } from '../sync/skipReasons.js';
import { ACTIVE_SYNC_STATES } from '../sync/states.js';
import type { DriftThresholds } from '../config/drift.js';
import { NO_MATCH_BASELINE_MS, type DriftFacts, type MatchCounts } from './detectors.js';

/** At most this many waiting calls are read; the warning counts them, it does not list them. */
const MAX_WAITING = 1000;

export async function readDriftFacts(
  db: Db,
  input: { crm: CrmName; nowMs: number; thresholds: DriftThresholds },
): Promise<DriftFacts> {
  const { crm, nowMs, thresholds } = input;
  const [lastWebhook, recentCalls, waiting, noMatch] = await Promise.all([
    lastVerifiedWebhookAt(db),
    thresholds.webhookSilenceMs > 0
      ? countSyncStatusByState(db, { crm, since: new Date(nowMs - thresholds.webhookSilenceMs) })
      : {},
    thresholds.analysisLagMs > 0 ? awaitingAnalysisSince(db, crm, nowMs) : [],
    thresholds.noMatchRise > 0
      ? matchCounts(db, crm, nowMs, thresholds.noMatchWindowMs)
      : { recent: { calls: 0, none: 0 }, baseline: { calls: 0, none: 0 } },
  ]);
  return {
    lastVerifiedWebhookAt: lastWebhook,
    callsInSilenceWindow: Object.values(recentCalls as Record<string, number>).reduce((a, b) => a + b, 0),
    awaitingAnalysisSince: waiting,
    noMatch,
  };
}

/**
 * Calls still being synced that the Service has not analysed, with since when each is known to be
 * completed: its verified call.completed delivery, or the worker first finding it completed (or
 * processing) and moving it to awaiting_analysis, whichever came first. Calls with a verified
 * analysis.ready are left out: the Service did its part. Calls older than the worker's give-up
 * span (plus an hour for the call itself) are failed by then, so neither they nor deliveries
 * older than that are read.
 */
async function awaitingAnalysisSince(db: Db, crm: CrmName, nowMs: number): Promise<Date[]> {
  const horizon = new Date(nowMs - ANALYSIS_GIVE_UP_MS - 3_600_000);
  const rows = await db.$queryRaw<{ since: Date }[]>`
    WITH completed AS (
      SELECT call_id, min(received_at) AS at FROM webhook_inbox
      WHERE received_at >= ${horizon} AND signature_ok AND type = 'call.completed'
      GROUP BY call_id),
    ready AS (
      SELECT DISTINCT call_id FROM webhook_inbox
      WHERE received_at >= ${horizon} AND signature_ok AND type = 'analysis.ready')
    SELECT since FROM (
      SELECT LEAST(
        (SELECT c.at FROM completed c WHERE c.call_id = s.call_id),
        CASE WHEN s.call_status IN ('completed', 'processing') THEN
          (SELECT min(e.at) FROM sync_event e
           WHERE e.call_id = s.call_id AND e.crm = s.crm AND e.to_state = 'awaiting_analysis')
        END) AS since
      FROM sync_status s
      WHERE s.crm = ${crm}
        AND s.state IN (${Prisma.join([...ACTIVE_SYNC_STATES])})
        AND s.call_status IS DISTINCT FROM 'analyzed'
        AND (s.call_created_at IS NULL OR s.call_created_at >= ${horizon})
        AND NOT EXISTS (SELECT 1 FROM ready r WHERE r.call_id = s.call_id)
    ) x
    WHERE since IS NOT NULL
    ORDER BY since
    LIMIT ${MAX_WAITING}`;
  return rows.map((r) => r.since);
}

/**
 * Calls whose match was decided (written back, or skipped because nothing matched) in the recent
 * span and in the baseline before it, by their last update (when they settled).
 */
async function matchCounts(
  db: Db,
  crm: CrmName,
  nowMs: number,
  windowMs: number,
): Promise<{ recent: MatchCounts; baseline: MatchCounts }> {
  const recentFrom = new Date(nowMs - windowMs);
  const baselineFrom = new Date(nowMs - windowMs - NO_MATCH_BASELINE_MS);
  const rows = await db.$queryRaw<
    { recent_calls: number; recent_none: number; base_calls: number; base_none: number }[]
  >`
    SELECT
      count(*) FILTER (WHERE recent)::int AS recent_calls,
      count(*) FILTER (WHERE recent AND none)::int AS recent_none,
      count(*) FILTER (WHERE NOT recent)::int AS base_calls,
      count(*) FILTER (WHERE NOT recent AND none)::int AS base_none
    FROM (
      SELECT s.updated_at >= ${recentFrom} AS recent, s.state = 'skipped' AS none
      FROM sync_status s
      WHERE s.crm = ${crm} AND s.updated_at >= ${baselineFrom} AND s.updated_at <= ${new Date(nowMs)}
        AND (s.state = 'written_back' OR (s.state = 'skipped' AND EXISTS (
          SELECT 1 FROM sync_event e
          WHERE e.call_id = s.call_id AND e.crm = s.crm AND e.to_state = 'skipped'
            AND e.detail LIKE ${`${NO_MATCH_REASON}%`})))
    ) x`;
  const r = rows[0];
  return {
    recent: { calls: Number(r?.recent_calls ?? 0), none: Number(r?.recent_none ?? 0) },
    baseline: { calls: Number(r?.base_calls ?? 0), none: Number(r?.base_none ?? 0) },
  };
}
