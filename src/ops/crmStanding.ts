/**
 * Standing CRM warnings an admin acts on (issue 21): fields the CRM lacks that calls are written
 * without (crm_field_gap, src/pipelines/fieldGaps.ts), and calls a CRM rule refused
 * (CRM_VALIDATION_REJECTED), each with its fix in words. Read from the database, so `crm-sync
 * status`, GET /status, /readyz, the console and `doctor` say the same.
 */
import { fieldFix } from '../crm/errors.js';
import type { CrmName } from '../crm/types.js';
import type { Db } from '../store/database.js';
import { listFieldGaps } from '../store/fieldGapRepo.js';

export interface CrmStanding {
  /** Fields calls are written without, and how to create each. */
  fieldGaps: { object: string; field: string; since: string; fix: string }[];
  /** Failed calls a CRM rule refused, grouped by the refusal (its message says the fix). */
  refusals: { calls: number; message: string }[];
}

export async function collectCrmStanding(db: Db, crm: CrmName): Promise<CrmStanding> {
  const [gaps, refused] = await Promise.all([
    listFieldGaps(db, crm),
    db.syncStatus.groupBy({
      by: ['lastErrorMessage'],
      where: { crm, state: 'failed', lastErrorCode: 'CRM_VALIDATION_REJECTED' },
      _count: { _all: true },
    }),
  ]);
  return {
    fieldGaps: gaps.map((g) => ({
      object: g.object,
      field: g.field,
      since: g.detectedAt.toISOString(),
      fix: fieldFix(crm, g.object, g.field),
    })),
    refusals: refused
      .map((r) => ({ calls: r._count._all, message: r.lastErrorMessage ?? '' }))
      .sort((a, b) => b.calls - a.calls),
  };
}

/** One line per standing warning, code first. */
export function crmStandingLines(s: Partial<CrmStanding>): { code: string; message: string }[] {
  return [
    ...(s.fieldGaps ?? []).map((g) => ({
      code: 'CRM_FIELD_MISSING',
      message: `calls are written without ${g.object}.${g.field}, which the CRM lacks (since ${g.since}): ${g.fix}`,
    })),
    ...(s.refusals ?? []).map((r) => ({
      code: 'CRM_VALIDATION_REJECTED',
      message: `${r.calls} call(s) refused: ${r.message}; then \`crm-sync replay --code CRM_VALIDATION_REJECTED\``,
    })),
  ];
}
