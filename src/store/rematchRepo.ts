/**
 * The store side of `crm-sync rematch`: the written calls of a period, page by page, and the
 * record of a move (the call's new CRM ids and decision, and a line in its history), together.
 */
import type { MatchDecision } from '../crm/types.js';
import type { CrmName } from '../crm/types.js';
import type { Prisma } from '../generated/prisma/client.js';
import { inTransaction, type Db } from './database.js';
import { addSyncEvent } from './syncEventRepo.js';
import { toSyncStatus, type SyncStatusRecord } from './syncStatusRepo.js';

/**
 * Calls written to `crm` with an activity, that happened at or after `since` (created at the
 * Service, else written at or after it), in call id order after `after`: one page.
 */
export async function listWrittenSince(
  db: Db,
  options: { crm: CrmName; since: Date; after?: string | undefined; limit: number },
): Promise<SyncStatusRecord[]> {
  const rows = await db.syncStatus.findMany({
    where: {
      crm: options.crm,
      state: 'written_back',
      crmActivityId: { not: null },
      ...(options.after === undefined ? {} : { callId: { gt: options.after } }),
      OR: [
        { callCreatedAt: { gte: options.since } },
        { callCreatedAt: null, writtenBackAt: { gte: options.since } },
      ],
    },
    orderBy: { callId: 'asc' },
    take: options.limit,
  });
  return rows.map(toSyncStatus);
}

/** The call's row moved on (replayed, rewritten) while the rematch ran: its move is not recorded. */
export class RematchStaleError extends Error {
  readonly code = 'REMATCH_STALE';
  constructor(callId: string, why: string) {
    super(`call ${callId}: ${why} while rematch ran; run rematch again`);
    this.name = 'RematchStaleError';
  }
}

/**
 * Records a move: the new CRM ids and decision on the call, and a history line (state kept,
 * written_back to written_back). Refused when the row is no longer the written activity the
 * move was planned for.
 */
export async function recordRematch(
  db: Db,
  input: {
    callId: string;
    crm: CrmName;
    activityId: string;
    now: Date;
    contactId: string | null;
    companyId: string | null;
    dealId: string | null;
    decision: MatchDecision | undefined;
    detail: string;
  },
): Promise<void> {
  await inTransaction(db, async (tx) => {
    const rows = await tx.$queryRaw<{ state: string; crm_activity_id: string | null }[]>`
      SELECT state, crm_activity_id FROM sync_status
      WHERE call_id = ${input.callId} AND crm = ${input.crm} FOR UPDATE`;
    const row = rows[0];
    if (row?.state !== 'written_back') {
      throw new RematchStaleError(input.callId, `state became ${row?.state ?? '(deleted)'}`);
    }
    if (row.crm_activity_id !== input.activityId) {
      throw new RematchStaleError(input.callId, 'its activity changed');
    }
    await tx.syncStatus.update({
      where: { callId_crm: { callId: input.callId, crm: input.crm } },
      data: {
        crmContactId: input.contactId,
        crmCompanyId: input.companyId,
        crmDealId: input.dealId,
        ...(input.decision ? { matchDecision: input.decision as unknown as Prisma.InputJsonValue } : {}),
        updatedAt: input.now,
      },
    });
    await addSyncEvent(tx, {
      callId: input.callId,
      crm: input.crm,
      at: input.now,
      from: 'written_back',
      to: 'written_back',
      detail: input.detail,
    });
  });
}
