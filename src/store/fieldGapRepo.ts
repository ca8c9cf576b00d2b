/**
 * `crm_field_gap`: fields the CRM lacks that an optional mapped field writes (src/pipelines/fieldGaps.ts).
 * Shared by every replica, so a gap one found is skipped by all without a refused write each.
 * Times are the database's: a gap is due for a re-check an hour after a write last found it missing.
 */
import type { CrmName } from '../crm/types.js';
import type { Db } from './database.js';

export interface FieldGap {
  object: string;
  field: string;
  detectedAt: Date;
  /** Found missing more than RECHECK_AFTER ago: the next write tries the field again. */
  due: boolean;
}

/** How long writes leave a known-missing field out before trying it again (the periodic re-check). */
export const RECHECK_AFTER = '1 hour';

export async function listFieldGaps(db: Db, crm: CrmName): Promise<FieldGap[]> {
  const rows = await db.$queryRaw<{ object: string; field: string; detected_at: Date; due: boolean }[]>`
    SELECT object, field, detected_at, checked_at < now() - ${RECHECK_AFTER}::interval AS due
    FROM crm_field_gap WHERE crm = ${crm} ORDER BY object, field`;
  return rows.map((r) => ({ object: r.object, field: r.field, detectedAt: r.detected_at, due: r.due }));
}

/** Records fields found missing now (a known one is marked checked again). */
export async function recordFieldGaps(
  db: Db,
  crm: CrmName,
  gaps: readonly { object: string; field: string }[],
): Promise<void> {
  for (const g of gaps) {
    await db.$executeRaw`
      INSERT INTO crm_field_gap (crm, object, field, detected_at, checked_at)
      VALUES (${crm}, ${g.object}, ${g.field}, now(), now())
      ON CONFLICT (crm, object, field) DO UPDATE SET checked_at = now()`;
  }
}

/** Forgets gaps whose field the CRM now has (a write with it went through, or doctor found it). */
export async function clearFieldGaps(
  db: Db,
  crm: CrmName,
  gaps: readonly { object: string; field: string }[],
): Promise<void> {
  for (const g of gaps) {
    await db.$executeRaw`
      DELETE FROM crm_field_gap WHERE crm = ${crm} AND object = ${g.object} AND field = ${g.field}`;
  }
}
