/**
 * Operator reads of the sync-status table beyond `crm-sync status`: failures by error code, calls
 * per state over a period, write-backs per hour, search. Used by the console and by replays.
 */
import type { CrmName } from '../crm/types.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { SyncState } from '../sync/states.js';
import type { Db } from './database.js';
import { countSyncStatusByState } from './syncStatus/queries.js';
import { toSyncStatus, type SyncStatusRecord } from './syncStatus/row.js';

/** Which failed calls: by last error code and/or when they failed (their last update). */
export interface FailedSelection {
  code?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
}

/** Calls in state failed matching `selection`, oldest failure first. */
export async function listFailedCalls(
  db: Db,
  crm: CrmName,
  selection: FailedSelection = {},
  limit = 10_000,
): Promise<SyncStatusRecord[]> {
  const rows = await db.syncStatus.findMany({
    where: {
      crm,
      state: 'failed',
      ...(selection.code !== undefined ? { lastErrorCode: selection.code } : {}),
      ...(selection.since || selection.until
        ? {
            updatedAt: {
              ...(selection.since ? { gte: selection.since } : {}),
              ...(selection.until ? { lt: selection.until } : {}),
            },
          }
        : {}),
    },
    orderBy: [{ updatedAt: 'asc' }, { callId: 'asc' }],
    take: limit,
  });
  return rows.map(toSyncStatus);
}

export interface FailureGroup {
  /** null: failed without a recorded code. */
  code: string | null;
  count: number;
  lastFailedAt: Date;
  /** A few of the most recent calls, to open. */
  sampleCallIds: string[];
  /** The most recent call's error message: what the code alone does not say. */
  lastMessage: string | null;
}

/** Failed calls grouped by their last error code, largest group first. */
export async function failureGroups(db: Db, crm: CrmName, samples = 5): Promise<FailureGroup[]> {
  const groups = await db.syncStatus.groupBy({
    by: ['lastErrorCode'],
    where: { crm, state: 'failed' },
    _count: { _all: true },
    _max: { updatedAt: true },
  });
  const out: FailureGroup[] = [];
  for (const g of groups) {
    const recent = await db.syncStatus.findMany({
      where: { crm, state: 'failed', lastErrorCode: g.lastErrorCode },
      orderBy: { updatedAt: 'desc' },
      take: samples,
      select: { callId: true, lastErrorMessage: true },
    });
    out.push({
      code: g.lastErrorCode,
      count: g._count._all,
      lastFailedAt: g._max.updatedAt ?? new Date(0),
      sampleCallIds: recent.map((r) => r.callId),
      lastMessage: recent[0]?.lastErrorMessage ?? null,
    });
  }
  return out.sort((a, b) => b.count - a.count || (a.code ?? '').localeCompare(b.code ?? ''));
}

/**
 * Calls per state among those that happened since `since` (the call's creation at the Service,
 * or when crm-sync first saw it when the Service did not say).
 */
export async function countByStateSince(
  db: Db,
  crm: CrmName,
  since: Date,
): Promise<Record<SyncState, number>> {
  return countSyncStatusByState(db, { crm, since });
}

/** Calls written back in each UTC hour since `since` (hours without any are left out). */
export async function writtenBackPerHour(
  db: Db,
  crm: CrmName,
  since: Date,
): Promise<{ hour: Date; count: number }[]> {
  // Hours counted from the epoch: the same UTC hours whatever the session's time zone.
  const rows = await db.$queryRaw<{ hour: number; count: number }[]>`
    SELECT floor(extract(epoch FROM written_back_at) / 3600)::int AS hour, count(*)::int AS count
    FROM sync_status
    WHERE crm = ${crm} AND written_back_at >= ${since}
    GROUP BY 1 ORDER BY 1`;
  return rows.map((r) => ({ hour: new Date(Number(r.hour) * 3_600_000), count: Number(r.count) }));
}

/**
 * Calls whose id starts with `query`, or whose participant email or company contains it (any case),
 * most recent first.
 */
export async function searchCalls(
  db: Db,
  crm: CrmName,
  query: string,
  limit = 50,
): Promise<SyncStatusRecord[]> {
  const q = query.trim();
  if (q === '') return [];
  return recentCalls(db, crm, limit, [
    { callId: { startsWith: q } },
    { participantEmail: { contains: q.toLowerCase() } },
    { participantCompany: { contains: q, mode: 'insensitive' } },
  ]);
}

/** The most recently updated calls (any of `anyOf` when given), newest first: the Calls page before a search. */
export async function recentCalls(
  db: Db,
  crm: CrmName,
  limit = 50,
  anyOf?: Prisma.SyncStatusWhereInput[],
): Promise<SyncStatusRecord[]> {
  const rows = await db.syncStatus.findMany({
    where: { crm, ...(anyOf ? { OR: anyOf } : {}) },
    orderBy: { updatedAt: 'desc' },
    take: limit,
  });
  return rows.map(toSyncStatus);
}

/** When the last webhook with a valid signature arrived, or null if none ever did. */
export async function lastVerifiedWebhookAt(db: Db): Promise<Date | null> {
  const row = await db.webhookInbox.findFirst({
    where: { signatureOk: true },
    orderBy: { receivedAt: 'desc' },
    select: { receivedAt: true },
  });
  return row?.receivedAt ?? null;
}

/**
 * When the calls that got a live context started (their Service created_at), since `since`: the
 * history the budget's live reserve learns from after a restart (src/budget/liveReserve.ts).
 */
export async function liveCallStartsSince(db: Db, crm: CrmName, since: Date): Promise<Date[]> {
  const rows = await db.syncStatus.findMany({
    where: { crm, contextPushedAt: { not: null }, callCreatedAt: { gte: since } },
    select: { callCreatedAt: true },
  });
  return rows.flatMap((r) => (r.callCreatedAt ? [r.callCreatedAt] : []));
}
