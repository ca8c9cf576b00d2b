import { describe, expect, it } from 'vitest';
import { listWrittenSince, recordRematch, RematchStaleError } from '../../src/store/rematchRepo.js';
import { syncHistory } from '../../src/store/syncEventRepo.js';
import { upsertDiscovered } from '../../src/store/syncStatus/discovered.js';
import { getSyncStatus } from '../../src/store/syncStatus/queries.js';
import { transitionSyncStatus } from '../../src/store/syncStatus/transitions.js';
import type { Db } from '../../src/store/database.js';
import { DATABASE_KINDS, useMigratedDatabase } from './helpers.js';

const T0 = new Date('2026-03-02T10:00:00.000Z');

/** A call taken through the states to written_back with an activity (or left discovered). */
async function seed(db: Db, callId: string, createdAt: Date | null, written = true): Promise<void> {
  await upsertDiscovered(db, {
    callId,
    crm: 'hubspot',
    call: { createdAt, participantEmail: `${callId}@acme.example` },
    now: T0,
  });
  if (!written) return;
  for (const to of ['context_pushed', 'awaiting_analysis', 'writing_back'] as const) {
    await transitionSyncStatus(db, { callId, crm: 'hubspot', to, now: T0 });
  }
  await transitionSyncStatus(db, {
    callId,
    crm: 'hubspot',
    to: 'written_back',
    now: T0,
    set: { writtenBackAt: T0, crmActivityId: `act-${callId}`, crmDealId: 'd1' },
  });
}

describe.each(DATABASE_KINDS)('rematch store on %s', (kind) => {
  const get = useMigratedDatabase(kind);

  it('lists written calls of the period, page by page in call id order', async () => {
    const { prisma } = get().db;
    await seed(prisma, 'c1', new Date('2026-02-01T00:00:00Z'));
    await seed(prisma, 'c2', new Date('2026-01-01T00:00:00Z')); // before the period
    await seed(prisma, 'c3', null); // no call time: written at T0, inside it
    await seed(prisma, 'c4', new Date('2026-02-02T00:00:00Z'), false); // not written
    await seed(prisma, 'c5', new Date('2026-02-03T00:00:00Z'));
    const since = new Date('2026-01-15T00:00:00Z');
    const first = await listWrittenSince(prisma, { crm: 'hubspot', since, limit: 2 });
    expect(first.map((r) => r.callId)).toEqual(['c1', 'c3']);
    const next = await listWrittenSince(prisma, { crm: 'hubspot', since, after: 'c3', limit: 2 });
    expect(next.map((r) => r.callId)).toEqual(['c5']);
    expect(await listWrittenSince(prisma, { crm: 'salesforce', since, limit: 10 })).toEqual([]);
  });

  it('records a move with a history line, and refuses one planned for a row that moved on', async () => {
    const { prisma } = get().db;
    await seed(prisma, 'm1', T0);
    const move = {
      callId: 'm1',
      crm: 'hubspot' as const,
      activityId: 'act-m1',
      now: new Date(T0.getTime() + 60_000),
      contactId: 'p1',
      companyId: 'o1',
      dealId: 'd2',
      decision: undefined,
      detail: 'rematch: deal [d1] → [d2]',
    };
    await recordRematch(prisma, move);
    expect(await getSyncStatus(prisma, 'm1', 'hubspot')).toMatchObject({
      state: 'written_back',
      crmDealId: 'd2',
      crmContactId: 'p1',
      updatedAt: move.now,
    });
    expect((await syncHistory(prisma, 'm1')).at(-1)).toMatchObject({
      fromState: 'written_back',
      toState: 'written_back',
      detail: 'rematch: deal [d1] → [d2]',
    });
    await expect(recordRematch(prisma, { ...move, activityId: 'act-other' })).rejects.toThrow(
      RematchStaleError,
    );
    await transitionSyncStatus(prisma, {
      callId: 'm1',
      crm: 'hubspot',
      to: 'awaiting_analysis',
      now: move.now,
    });
    await expect(recordRematch(prisma, move)).rejects.toThrow(/state became awaiting_analysis/);
  });
});
