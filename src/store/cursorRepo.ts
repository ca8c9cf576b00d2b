import type { SyncCursor as SyncCursorRow } from '../generated/prisma/client.js';
import type { Db } from './database.js';

/** Where a discovery loop stopped (table sync_cursor). */
export interface SyncCursorRecord {
  name: string;
  /** The Service's opaque list cursor; null before the first page. */
  cursor: string | null;
  /** created_at of the newest call seen, for humans and for a restart without a cursor. */
  lastCallCreatedAt: Date | null;
  updatedAt: Date;
}

function toSyncCursor(row: SyncCursorRow): SyncCursorRecord {
  return {
    name: row.name,
    cursor: row.cursor,
    lastCallCreatedAt: row.lastCallCreatedAt,
    updatedAt: row.updatedAt,
  };
}

export async function getCursor(db: Db, name: string): Promise<SyncCursorRecord | null> {
  const row = await db.syncCursor.findUnique({ where: { name } });
  return row ? toSyncCursor(row) : null;
}

/**
 * Saves a loop's position. `lastCallCreatedAt` only moves forward (an older value is ignored), so
 * a page processed late cannot rewind it.
 */
export async function saveCursor(
  db: Db,
  input: { name: string; cursor: string | null; lastCallCreatedAt?: Date | null; now: Date },
): Promise<SyncCursorRecord> {
  const last = input.lastCallCreatedAt ?? null;
  const rows = await db.$queryRaw<SyncCursorRowRaw[]>`
    INSERT INTO sync_cursor (name, cursor, last_call_created_at, updated_at)
    VALUES (${input.name}, ${input.cursor}, ${last}, ${input.now})
    ON CONFLICT (name) DO UPDATE SET
      cursor = EXCLUDED.cursor,
      last_call_created_at = GREATEST(sync_cursor.last_call_created_at, EXCLUDED.last_call_created_at),
      updated_at = EXCLUDED.updated_at
    RETURNING name, cursor, last_call_created_at, updated_at`;
  const row = rows[0];
  if (!row) throw new Error(`sync_cursor ${input.name}: upsert returned no row`);
  return {
    name: row.name,
    cursor: row.cursor,
    lastCallCreatedAt: row.last_call_created_at,
    updatedAt: row.updated_at,
  };
}

interface SyncCursorRowRaw {
  name: string;
  cursor: string | null;
  last_call_created_at: Date | null;
  updated_at: Date;
}

/** Forgets a loop's position (the next run starts over, e.g. `backfill --from`). */
export async function deleteCursor(db: Db, name: string): Promise<boolean> {
  const { count } = await db.syncCursor.deleteMany({ where: { name } });
  return count > 0;
}
