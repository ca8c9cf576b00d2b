import { describe, expect, it } from 'vitest';
import { IllegalTransitionError } from '../../src/sync/states.js';
import { enqueueJob, JOB_PRIORITY } from '../../src/store/jobQueue.js';
import { listFollowupDrafts, saveFollowupDrafts } from '../../src/store/followupRepo.js';
import { followupsWrittenUpdate } from '../../src/store/followupWrites.js';
import { syncHistory } from '../../src/store/syncEventRepo.js';
import {
  countSyncStatusByState,
  getSyncStatus,
  listSyncStatusByState,
  recentSyncFailures,
  recordSyncError,
  StaleSyncStateError,
  SyncStatusNotFoundError,
  transitionSyncStatus,
  transitionSyncStatuses,
  upsertDiscovered,
  upsertDiscoveredEach,
} from '../../src/store/syncStatusRepo.js';
import { liveCallStartsSince } from '../../src/store/syncStatusQueries.js';
import { DATABASE_KINDS, useMigratedDatabase } from './helpers.js';

const T0 = new Date('2026-03-02T10:00:00.000Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);

describe.each(DATABASE_KINDS)('SyncStatusRepo on %s', (kind) => {
  const get = useMigratedDatabase(kind);

  it('records a discovered call once and keeps its call facts current', async () => {
    const { prisma } = get().db;
    const call = {
      createdAt: new Date('2026-03-01T09:00:00.000Z'),
      participantEmail: 'Ann@Example.com',
      participantCompany: 'Example Ltd',
      status: 'in_progress',
    };
    const first = await upsertDiscovered(prisma, { callId: 'call_a', crm: 'hubspot', call, now: at(0) });
    expect(first.created).toBe(true);
    expect(first.record).toMatchObject({
      callId: 'call_a',
      crm: 'hubspot',
      state: 'discovered',
      attempts: 0,
      participantEmail: 'ann@example.com',
      callCreatedAt: call.createdAt,
      crmFollowupIds: [],
      createdAt: at(0),
    });

    const again = await upsertDiscovered(prisma, {
      callId: 'call_a',
      crm: 'hubspot',
      call: { status: 'analyzed', overallScore: 82 },
      now: at(5),
    });
    expect(again.created).toBe(false);
    expect(again.record).toMatchObject({
      state: 'discovered',
      callStatus: 'analyzed',
      overallScore: 82,
      participantCompany: 'Example Ltd',
      updatedAt: at(5),
    });
    // The same call for the other CRM is a separate row.
    expect(
      (await upsertDiscovered(prisma, { callId: 'call_a', crm: 'salesforce', now: at(6) })).created,
    ).toBe(true);
    expect(await syncHistory(prisma, 'call_a', { crm: 'hubspot' })).toHaveLength(1);
  });

  it('creates one row when several discover the same call at once', async () => {
    const { prisma } = get().db;
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        upsertDiscovered(prisma, { callId: 'call_race', crm: 'hubspot', now: at(0) }),
      ),
    );
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(await syncHistory(prisma, 'call_race')).toHaveLength(1);
  });

  it('moves through the table, sets the fields given, and refuses illegal moves', async () => {
    const { prisma } = get().db;
    await upsertDiscovered(prisma, { callId: 'call_b', crm: 'hubspot', now: at(0) });
    await transitionSyncStatus(prisma, {
      callId: 'call_b',
      crm: 'hubspot',
      to: 'context_pushed',
      now: at(1),
      set: { contextPushedAt: at(1), crmContactId: 'c1', crmCompanyId: 'co1', crmDealId: 'd1' },
    });
    await transitionSyncStatus(prisma, {
      callId: 'call_b',
      crm: 'hubspot',
      to: 'awaiting_analysis',
      now: at(2),
    });
    await transitionSyncStatus(prisma, {
      callId: 'call_b',
      crm: 'hubspot',
      to: 'writing_back',
      expectedFrom: 'awaiting_analysis',
      now: at(3),
    });
    const done = await transitionSyncStatus(prisma, {
      callId: 'call_b',
      crm: 'hubspot',
      to: 'written_back',
      now: at(4),
      detail: 'activity a1',
      set: { writtenBackAt: at(4), crmActivityId: 'a1', crmFollowupIds: ['f1', 'f2'] },
    });
    expect(done).toMatchObject({
      state: 'written_back',
      contextPushedAt: at(1),
      writtenBackAt: at(4),
      crmContactId: 'c1',
      crmActivityId: 'a1',
      crmFollowupIds: ['f1', 'f2'],
      updatedAt: at(4),
    });

    await expect(
      transitionSyncStatus(prisma, { callId: 'call_b', crm: 'hubspot', to: 'context_pushed', now: at(5) }),
    ).rejects.toBeInstanceOf(IllegalTransitionError);
    await expect(
      transitionSyncStatus(prisma, {
        callId: 'call_b',
        crm: 'hubspot',
        to: 'writing_back',
        expectedFrom: 'awaiting_analysis',
        now: at(5),
      }),
    ).rejects.toBeInstanceOf(StaleSyncStateError);
    await expect(
      transitionSyncStatus(prisma, { callId: 'nope', crm: 'hubspot', to: 'failed', now: at(5) }),
    ).rejects.toBeInstanceOf(SyncStatusNotFoundError);
    expect((await getSyncStatus(prisma, 'call_b', 'hubspot'))?.updatedAt).toEqual(at(4));

    const history = await syncHistory(prisma, 'call_b');
    expect(history.map((e) => [e.fromState, e.toState])).toEqual([
      [null, 'discovered'],
      ['discovered', 'context_pushed'],
      ['context_pushed', 'awaiting_analysis'],
      ['awaiting_analysis', 'writing_back'],
      ['writing_back', 'written_back'],
    ]);
    expect(history.at(-1)).toMatchObject({ at: at(4), detail: 'activity a1' });
  });

  it('records errors with a next attempt, lists only due calls, and resets on the next move', async () => {
    const { prisma } = get().db;
    await upsertDiscovered(prisma, { callId: 'call_c', crm: 'salesforce', now: at(0) });
    await transitionSyncStatus(prisma, {
      callId: 'call_c',
      crm: 'salesforce',
      to: 'awaiting_analysis',
      now: at(1),
    });
    const failed = await recordSyncError(prisma, {
      callId: 'call_c',
      crm: 'salesforce',
      code: 'CRM_TRANSIENT',
      message: 'HTTP 503',
      nextAttemptAt: at(60),
      now: at(2),
    });
    expect(failed).toMatchObject({
      state: 'awaiting_analysis',
      attempts: 1,
      lastErrorCode: 'CRM_TRANSIENT',
      nextAttemptAt: at(60),
    });
    const due = (t: Date) =>
      listSyncStatusByState(prisma, 'awaiting_analysis', { crm: 'salesforce', dueAt: t }).then((r) =>
        r.map((s) => s.callId),
      );
    expect(await due(at(30))).not.toContain('call_c');
    expect(await due(at(60))).toContain('call_c');

    const failures = await recentSyncFailures(prisma, { crm: 'salesforce' });
    expect(failures.map((f) => f.callId)).toContain('call_c');

    const moved = await transitionSyncStatus(prisma, {
      callId: 'call_c',
      crm: 'salesforce',
      to: 'writing_back',
      now: at(61),
    });
    expect(moved).toMatchObject({ attempts: 0, lastErrorCode: null, nextAttemptAt: null });
    const history = await syncHistory(prisma, 'call_c', { crm: 'salesforce' });
    expect(history[2]).toMatchObject({
      fromState: 'awaiting_analysis',
      toState: 'awaiting_analysis',
      detail: 'CRM_TRANSIENT: HTTP 503',
    });
  });

  it('counts calls per state, every state present', async () => {
    const { prisma } = get().db;
    await upsertDiscovered(prisma, { callId: 'call_d', crm: 'salesforce', now: at(0) });
    await transitionSyncStatus(prisma, { callId: 'call_d', crm: 'salesforce', to: 'skipped', now: at(1) });
    const counts = await countSyncStatusByState(prisma, { crm: 'salesforce' });
    expect(counts).toEqual({
      discovered: 1, // call_a
      context_pushed: 0,
      awaiting_analysis: 0,
      writing_back: 1, // call_c
      written_back: 0,
      failed: 0,
      skipped: 1,
    });
  });

  it("joins the caller's transaction: a rollback undoes the row, its history and the job", async () => {
    const { prisma } = get().db;
    await expect(
      prisma.$transaction(async (tx) => {
        await upsertDiscovered(tx, { callId: 'call_tx', crm: 'hubspot', now: at(0) });
        await enqueueJob(tx, {
          kind: 'writeback',
          key: 'writeback:call_tx',
          priority: JOB_PRIORITY.writeback,
          now: at(0),
        });
        throw new Error('caller gave up');
      }),
    ).rejects.toThrow('caller gave up');
    expect(await getSyncStatus(prisma, 'call_tx', 'hubspot')).toBeNull();
    expect(await syncHistory(prisma, 'call_tx')).toEqual([]);
    expect(await prisma.job.count({ where: { key: 'writeback:call_tx' } })).toBe(0);
  });

  it('lists when the calls that got a live context started, for the live reserve to relearn', async () => {
    const { prisma } = get().db;
    const row = (callId: string, crm: string, startedAt: Date, pushed: boolean) => ({
      callId,
      crm,
      state: 'written_back',
      callCreatedAt: startedAt,
      contextPushedAt: pushed ? new Date(startedAt.getTime() + 500) : null,
    });
    await prisma.syncStatus.createMany({
      data: [
        row('call_live_1', 'hubspot', at(-3600), true),
        row('call_live_2', 'hubspot', at(-60), true),
        row('call_backfilled', 'hubspot', at(-120), false),
        row('call_too_old', 'hubspot', at(-8 * 86_400), true),
        row('call_other_crm', 'salesforce', at(-30), true),
      ],
    });
    const starts = await liveCallStartsSince(prisma, 'hubspot', at(-7 * 86_400));
    expect(starts.map((d) => d.getTime()).sort((a, b) => a - b)).toEqual([
      at(-3600).getTime(),
      at(-60).getTime(),
    ]);
  });

  it('moves a batch of calls in one statement; a call that cannot move gets its own error', async () => {
    const { prisma } = get().db;
    for (const callId of ['call_b1', 'call_b2', 'call_b3']) {
      await upsertDiscovered(prisma, { callId, crm: 'hubspot', now: T0 });
    }
    await transitionSyncStatus(prisma, { callId: 'call_b3', crm: 'hubspot', to: 'skipped', now: T0 });
    const results = await transitionSyncStatuses(prisma, {
      callIds: ['call_b1', 'call_b2', 'call_b3', 'call_missing'],
      crm: 'hubspot',
      to: 'writing_back',
      now: at(1),
      detail: 'writing to the CRM',
    });
    expect(results.slice(0, 2)).toEqual([true, true]);
    expect(results[2]).toBeInstanceOf(IllegalTransitionError);
    expect(results[3]).toBeInstanceOf(SyncStatusNotFoundError);
    expect((await getSyncStatus(prisma, 'call_b1', 'hubspot'))?.state).toBe('writing_back');
    expect((await getSyncStatus(prisma, 'call_b3', 'hubspot'))?.state).toBe('skipped');
    const history = await syncHistory(prisma, 'call_b2', { crm: 'hubspot' });
    expect(history.map((e) => [e.fromState, e.toState, e.detail])).toContainEqual([
      'discovered',
      'writing_back',
      'writing to the CRM',
    ]);
  });

  it('upserts a batch in one statement; a call the database refuses fails alone', async () => {
    const { prisma } = get().db;
    const facts = (company: string) => ({
      createdAt: T0,
      participantEmail: 'a@b.example',
      participantCompany: company,
      status: 'analyzed',
    });
    const [a, bad, b] = await upsertDiscoveredEach(prisma, 'hubspot', [
      { callId: 'each_a', call: facts('Acme'), now: at(0) },
      // PostgreSQL text cannot hold NUL: the batch's statement fails, then this call alone.
      { callId: 'each_bad', call: facts('Ac\u0000me'), now: at(0) },
      { callId: 'each_b', call: facts('Beta'), now: at(0) },
    ]);
    expect(a).toMatchObject({ created: true, record: { callId: 'each_a', state: 'discovered' } });
    expect(b).toMatchObject({ created: true, record: { callId: 'each_b', participantCompany: 'Beta' } });
    expect(bad).toBeInstanceOf(Error);
    expect(await getSyncStatus(prisma, 'each_bad', 'hubspot')).toBeNull();
  });

  it('runs a write that belongs with a move in its statement, even when the move is refused', async () => {
    const { prisma } = get().db;
    const draft = { id: 'd1', subject: 's', body: 'b' };
    for (const id of ['along_ok', 'along_refused']) {
      await upsertDiscovered(prisma, { callId: id, crm: 'hubspot', now: at(0) });
      await saveFollowupDrafts(prisma, id, [draft], at(0));
    }
    await transitionSyncStatus(prisma, {
      callId: 'along_ok',
      crm: 'hubspot',
      to: 'writing_back',
      now: at(1),
    });
    const moved = await transitionSyncStatus(prisma, {
      callId: 'along_ok',
      crm: 'hubspot',
      to: 'written_back',
      now: at(2),
      alongside: followupsWrittenUpdate('along_ok', [{ draftId: 'd1', crmId: 'note_1' }], at(2)) ?? undefined,
    });
    expect(moved.state).toBe('written_back');
    expect((await listFollowupDrafts(prisma, 'along_ok')).map((d) => d.crmId)).toEqual(['note_1']);

    // discovered -> written_back is not a move the table allows: refused, the drafts still marked.
    await expect(
      transitionSyncStatus(prisma, {
        callId: 'along_refused',
        crm: 'hubspot',
        to: 'written_back',
        now: at(2),
        alongside:
          followupsWrittenUpdate('along_refused', [{ draftId: 'd1', crmId: 'note_2' }], at(2)) ?? undefined,
      }),
    ).rejects.toBeInstanceOf(IllegalTransitionError);
    expect((await listFollowupDrafts(prisma, 'along_refused')).map((d) => d.crmId)).toEqual(['note_2']);
  });
});
