import { describe, expect, it } from 'vitest';
import { getSyncStatus, transitionSyncStatus, upsertDiscovered } from '../../src/store/syncStatusRepo.js';
import {
  claimFollowupGeneration,
  saveFollowupAnswer,
  saveFollowupDrafts,
  settleFollowupClaim,
} from '../../src/store/followupRepo.js';
import { recordSyncError } from '../../src/store/syncStatusRepo.js';
import { replayCall, replayFailed, runReplay } from '../../src/ops/replay.js';
import { parseReplayRequest } from '../../src/ops/replayRequest.js';
import { replayOutcome } from '../../src/cli/commands/replay.js';
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

  it('keeps a claimed generation (answered, uncertain or in flight) unless the operator asks to regenerate', async () => {
    const db = current().db.prisma;
    const ids = ['none', 'uncertain', 'in_flight', 'kept'];
    for (const id of ids) {
      await upsertDiscovered(db, { callId: id, crm: 'hubspot', now: T0 });
      expect(await claimFollowupGeneration(db, id, 'hubspot', T0)).toBe(true);
    }
    await saveFollowupAnswer(db, { callId: 'none', crm: 'hubspot', drafts: [], now: T0 });
    await settleFollowupClaim(db, {
      callId: 'uncertain',
      crm: 'hubspot',
      now: T0,
      warning: 'FOLLOWUP_UNCERTAIN: x',
    });
    await saveFollowupDrafts(db, 'kept', [{ id: 'fu_1', subject: 's', body: 'b' }], T0);
    for (const id of ids) await replayCall(db, 'hubspot', id, T0);
    for (const id of ids) expect(await claimFollowupGeneration(db, id, 'hubspot', T0)).toBe(false);

    for (const id of ids) await replayCall(db, 'hubspot', id, T0, { regenerateFollowups: true });
    expect(await db.syncStatus.findFirst({ where: { callId: 'none' } })).toMatchObject({
      followupsRequestedAt: null,
      followupsSettledAt: null,
    });
    for (const id of ['none', 'uncertain', 'in_flight']) {
      expect(await claimFollowupGeneration(db, id, 'hubspot', T0)).toBe(true);
    }
    // Drafts stored: they are the call's follow-ups, never replaced.
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
    await replayCall(db, 'hubspot', 'adopted', T0, { regenerateFollowups: true });
    expect(await claimFollowupGeneration(db, 'adopted', 'hubspot', T0)).toBe(false);
  });

  it('replays failed calls by error code and by the window they failed in, the same for every entry point', async () => {
    const db = current().db.prisma;
    const fail = async (callId: string, code: string, at: Date) => {
      await upsertDiscovered(db, { callId, crm: 'salesforce', now: at });
      await transitionSyncStatus(db, { callId, crm: 'salesforce', to: 'failed', now: at });
      await recordSyncError(db, {
        callId,
        crm: 'salesforce',
        code,
        message: 'm',
        nextAttemptAt: null,
        now: at,
      });
    };
    const hour = (h: number) => new Date(Date.UTC(2026, 0, 6, h));
    await fail('m1', 'MAPPING_REQUIRED_MISSING', hour(9));
    await fail('m2', 'MAPPING_REQUIRED_MISSING', hour(11));
    await fail('r1', 'CRM_REJECTED', hour(10));
    const now = hour(12);

    const byCode = await runReplay(db, 'salesforce', parseReplayRequest({ code: 'CRM_REJECTED' }), now);
    expect(byCode.callIds).toEqual(['r1']);
    const byWindow = await runReplay(
      db,
      'salesforce',
      parseReplayRequest({ since: '2026-01-06T08:30', until: '2026-01-06T10:00Z' }),
      now,
    );
    expect(byWindow.callIds).toEqual(['m1']);
    expect((await getSyncStatus(db, 'm2', 'salesforce'))?.state).toBe('failed');
    const rest = await replayFailed(db, 'salesforce', now, { code: 'MAPPING_REQUIRED_MISSING' });
    expect(rest.callIds).toEqual(['m2']);
    expect(
      await db.job.count({
        where: { state: 'queued', key: { in: ['writeback:m1', 'writeback:m2', 'writeback:r1'] } },
      }),
    ).toBe(3);
  });

  it('a code no failed call has replays nothing and names the codes the failed calls do have', async () => {
    const db = current().db.prisma;
    const at = new Date(Date.UTC(2026, 0, 7, 9));
    for (const [callId, code] of [
      ['b1', 'CRM_AUTH'],
      ['b2', 'CRM_AUTH'],
      ['b3', 'CRM_REJECTED'],
    ] as const) {
      await upsertDiscovered(db, { callId, crm: 'hubspot', now: at });
      await transitionSyncStatus(db, { callId, crm: 'hubspot', to: 'failed', now: at });
      await recordSyncError(db, { callId, crm: 'hubspot', code, message: 'm', nextAttemptAt: null, now: at });
    }
    const result = await runReplay(db, 'hubspot', parseReplayRequest({ code: 'BOGUS' }), at);
    expect(result).toEqual({
      callIds: [],
      failedCodes: [
        { code: 'CRM_AUTH', calls: 2 },
        { code: 'CRM_REJECTED', calls: 1 },
      ],
    });
    expect(replayOutcome(result, 'BOGUS')).toBe(
      'Nothing to replay: no failed call has the code BOGUS. The failed calls have: CRM_AUTH (2), CRM_REJECTED (1).',
    );
    expect(replayOutcome({ callIds: [], failedCodes: [] }, 'BOGUS')).toBe(
      'Nothing to replay: no call is in state failed (asked for code BOGUS).',
    );
  });
});

describe('replay requests', () => {
  it('accepts one call, every failed call, a code or a window, and refuses the rest plainly', () => {
    expect(parseReplayRequest({ callId: ' c1 ' })).toEqual({ callId: 'c1', regenerateFollowups: false });
    expect(parseReplayRequest({ failed: true })).toEqual({
      failed: { code: undefined, since: undefined, until: undefined },
      regenerateFollowups: false,
    });
    // Only an explicit ask: the CLI flag, the admin API's true, a ticked console checkbox.
    for (const yes of [true, 'true', 'on']) {
      expect(parseReplayRequest({ callId: 'c1', regenerateFollowups: yes }).regenerateFollowups).toBe(true);
    }
    expect(parseReplayRequest({ callId: 'c1', regenerateFollowups: 'yes please' }).regenerateFollowups).toBe(
      false,
    );
    expect(parseReplayRequest({ failed: 'true', code: 'CRM_AUTH' })).toMatchObject({
      failed: { code: 'CRM_AUTH' },
    });
    expect(parseReplayRequest({ since: '2026-01-31' })).toMatchObject({
      failed: { since: new Date('2026-01-31T00:00:00Z') },
    });
    expect(() => parseReplayRequest({})).toThrow(/give a call id/);
    expect(() => parseReplayRequest({ since: 'yesterday' })).toThrow(/since: expected a date/);
    expect(() => parseReplayRequest({ since: '2026-02-01', until: '2026-01-01' })).toThrow(/before until/);
    // Contradictory: one call, and also every failed call (or a code, or a window).
    for (const extra of [{ failed: true }, { code: 'CRM_AUTH' }, { since: '2026-01-31' }]) {
      expect(() => parseReplayRequest({ callId: 'c1', ...extra })).toThrow(
        'a call id replays that one call: give it alone, or failed, a code or a time window without it',
      );
    }
  });
});
