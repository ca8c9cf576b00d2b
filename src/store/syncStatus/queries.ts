/** Reads of sync_status: one call, many calls, the worker's to-do list, counts and failures. */
import type { CrmName } from '../../crm/types.js';
import { isSyncState, SYNC_STATES, type SyncState } from '../../sync/states.js';
import type { Db } from '../database.js';
import { toSyncStatus, type SyncStatusRecord } from './row.js';

export async function getSyncStatus(db: Db, callId: string, crm: CrmName): Promise<SyncStatusRecord | null> {
  const row = await db.syncStatus.findUnique({ where: { callId_crm: { callId, crm } } });
  return row ? toSyncStatus(row) : null;
}

/** The rows of many calls in one query, by call id (calls without one are absent). */
export async function getSyncStatuses(
  db: Db,
  callIds: readonly string[],
  crm: CrmName,
): Promise<Map<string, SyncStatusRecord>> {
  if (callIds.length === 0) return new Map();
  const rows = await db.syncStatus.findMany({ where: { crm, callId: { in: [...new Set(callIds)] } } });
  return new Map(rows.map((row) => [row.callId, toSyncStatus(row)]));
}

/**
 * Calls in `state`, oldest call first. With `dueAt`, only those whose next attempt is due
 * (next_attempt_at null or not after it): the worker's to-do list.
 */
export async function listSyncStatusByState(
  db: Db,
  state: SyncState,
  options: { crm?: CrmName; dueAt?: Date; limit?: number } = {},
): Promise<SyncStatusRecord[]> {
  const rows = await db.syncStatus.findMany({
    where: {
      state,
      ...(options.crm ? { crm: options.crm } : {}),
      ...(options.dueAt ? { OR: [{ nextAttemptAt: null }, { nextAttemptAt: { lte: options.dueAt } }] } : {}),
    },
    orderBy: [{ callCreatedAt: { sort: 'asc', nulls: 'last' } }, { createdAt: 'asc' }],
    take: options.limit ?? 100,
  });
  return rows.map(toSyncStatus);
}

/** Number of calls in each state (every state present, zero when none). */
export async function countSyncStatusByState(
  db: Db,
  options: { crm?: CrmName; since?: Date } = {},
): Promise<Record<SyncState, number>> {
  // `since`: calls that happened since then (created at the Service, else first seen by crm-sync).
  const since = options.since;
  const groups = await db.syncStatus.groupBy({
    by: ['state'],
    where: {
      ...(options.crm ? { crm: options.crm } : {}),
      ...(since
        ? { OR: [{ callCreatedAt: { gte: since } }, { callCreatedAt: null, createdAt: { gte: since } }] }
        : {}),
    },
    _count: { _all: true },
  });
  const counts = Object.fromEntries(SYNC_STATES.map((s) => [s, 0])) as Record<SyncState, number>;
  for (const g of groups) if (isSyncState(g.state)) counts[g.state] = g._count._all;
  return counts;
}

/** Calls that failed, or whose last try failed, most recent first. */
export async function recentSyncFailures(
  db: Db,
  options: { crm?: CrmName; since?: Date; limit?: number } = {},
): Promise<SyncStatusRecord[]> {
  const rows = await db.syncStatus.findMany({
    where: {
      OR: [{ state: 'failed' }, { lastErrorCode: { not: null } }],
      ...(options.crm ? { crm: options.crm } : {}),
      ...(options.since ? { updatedAt: { gte: options.since } } : {}),
    },
    orderBy: { updatedAt: 'desc' },
    take: options.limit ?? 20,
  });
  return rows.map(toSyncStatus);
}
