import type { CrmName } from '../crm/types.js';
import type { SyncEvent as SyncEventRow } from '../generated/prisma/client.js';
import type { Db } from './database.js';

/** One line of a call's sync history (table sync_event). */
export interface SyncEventRecord {
  id: number;
  callId: string;
  crm: string;
  at: Date;
  /** Null on the event that created the sync status. */
  fromState: string | null;
  toState: string;
  /** Why, or the error of a failed try (then fromState = toState). */
  detail: string | null;
}

function toSyncEvent(row: SyncEventRow): SyncEventRecord {
  return {
    id: Number(row.id),
    callId: row.callId,
    crm: row.crm,
    at: row.at,
    fromState: row.fromState,
    toState: row.toState,
    detail: row.detail,
  };
}

/**
 * The history line of a `crm-sync rematch` move (state kept: written_back to written_back), and how
 * readers tell it from a failed try, which also keeps the state.
 */
export const rematchDetail = (change: string) => `rematch: ${change}`;
export const isRematchEvent = (e: Pick<SyncEventRecord, 'fromState' | 'toState' | 'detail'>) =>
  e.fromState === e.toState && (e.detail ?? '').startsWith('rematch: ');

/** Longest detail kept; error messages from CRMs can be whole HTML pages. */
const MAX_DETAIL = 2000;

/** A history row's detail as stored (null when none, cut to MAX_DETAIL). */
export function clipDetail(detail: string | undefined): string | null {
  return detail === undefined ? null : detail.slice(0, MAX_DETAIL);
}

export async function addSyncEvent(
  db: Db,
  event: {
    callId: string;
    crm: CrmName;
    at: Date;
    from: string | null;
    to: string;
    detail?: string | undefined;
  },
): Promise<void> {
  await db.syncEvent.create({
    data: {
      callId: event.callId,
      crm: event.crm,
      at: event.at,
      fromState: event.from,
      toState: event.to,
      detail: clipDetail(event.detail),
    },
  });
}

/** A call's history, oldest first (every CRM unless one is named). */
export async function syncHistory(
  db: Db,
  callId: string,
  options: { crm?: CrmName; limit?: number } = {},
): Promise<SyncEventRecord[]> {
  const rows = await db.syncEvent.findMany({
    where: { callId, ...(options.crm ? { crm: options.crm } : {}) },
    orderBy: [{ at: 'asc' }, { id: 'asc' }],
    take: options.limit ?? 500,
  });
  return rows.map(toSyncEvent);
}

/** Calls now skipped, most recently first, each with the reason its move to skipped gave. */
export async function recentSkips(
  db: Db,
  options: { crm: CrmName; limit?: number },
): Promise<{ callId: string; reason: string | null; at: Date }[]> {
  const rows = await db.$queryRaw<{ call_id: string; detail: string | null; updated_at: Date }[]>`
    SELECT s.call_id, s.updated_at,
      (SELECT e.detail FROM sync_event e
       WHERE e.call_id = s.call_id AND e.crm = s.crm AND e.to_state = 'skipped'
       ORDER BY e.at DESC, e.id DESC LIMIT 1) AS detail
    FROM sync_status s
    WHERE s.crm = ${options.crm} AND s.state = 'skipped'
    ORDER BY s.updated_at DESC
    LIMIT ${options.limit ?? 10}`;
  return rows.map((r) => ({ callId: r.call_id, reason: r.detail, at: r.updated_at }));
}
