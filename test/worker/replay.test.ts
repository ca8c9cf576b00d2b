import { describe, expect, it } from 'vitest';
import { getSyncStatus, transitionSyncStatus, upsertDiscovered } from '../../src/store/syncStatusRepo.js';
import { claimFollowupGeneration, saveFollowupDrafts } from '../../src/store/followupRepo.js';
import { replayCall, replayFailed } from '../../src/worker/replay.js';
import { DATABASE_KINDS, useMigratedDatabase } from '../store/helpers.js';

const T0 = new Date(Date.UTC(2026, 0, 5, 12));

describe.each(DATABASE_KINDS)('replay (%s)', (kind) => {
  const current = useMigratedDatabase(kind);

  it('puts a failed call back to work with one queued write-back, however often it is asked', async () => {
    const db = current().db.prisma;
    await upsertDiscovered(db, { callId: 'c1', crm: 'hubspot', now: T0 });
    await transitionSyncStatus(db, { callId: 'c1', crm: 'hubspot', to: 'failed', now: T0 });
    const { callIds } = await replayFailed(db, 'hubspot', T0);
    await replayCall(db, 'hubspot', 'c1', T0);
    expect(callIds).toEqual(['c1']);
    expect((await getSyncStatus(db, 'c1', 'hubspot'))?.state).toBe('awaiting_analysis');
    const jobs = await db.job.findMany({ where: { key: 'writeback:c1', state: 'queued' } });
    expect(jobs).toHaveLength(1);
    expect(jobs[0]?.payload).toMatchObject({ callId: 'c1', reason: 'replay' });
  });

  it('re-allows a follow-up generation only when the claimed one produced no drafts', async () => {
    const db = current().db.prisma;
    for (const id of ['lost', 'kept']) {
      await upsertDiscovered(db, { callId: id, crm: 'hubspot', now: T0 });
      expect(await claimFollowupGeneration(db, id, 'hubspot', T0)).toBe(true);
    }
    await saveFollowupDrafts(db, 'kept', [{ id: 'fu_1', subject: 's', body: 'b' }], T0);
    await replayCall(db, 'hubspot', 'lost', T0);
    await replayCall(db, 'hubspot', 'kept', T0);
    expect(await claimFollowupGeneration(db, 'lost', 'hubspot', T0)).toBe(true);
    expect(await claimFollowupGeneration(db, 'kept', 'hubspot', T0)).toBe(false);
  });

  it('never re-allows a generation for a call whose drafts were found in the CRM (no local drafts)', async () => {
    const db = current().db.prisma;
    await upsertDiscovered(db, { callId: 'adopted', crm: 'hubspot', now: T0 });
    expect(await claimFollowupGeneration(db, 'adopted', 'hubspot', T0)).toBe(true);
    await db.syncStatus.update({
      where: { callId_crm: { callId: 'adopted', crm: 'hubspot' } },
      data: { crmFollowupIds: ['note-1', 'note-2'] },
    });
    await replayCall(db, 'hubspot', 'adopted', T0);
    expect(await claimFollowupGeneration(db, 'adopted', 'hubspot', T0)).toBe(false);
  });
});
