import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/database.js';
import {
  claimFollowupGeneration,
  listFollowupDrafts,
  listFollowupDraftsOf,
  saveFollowupAnswer,
  saveFollowupDrafts,
} from '../../src/store/followupRepo.js';
import { markFollowupsWritten } from '../../src/store/followupWrites.js';
import { isLive, runAsLive } from '../../src/store/livePriority.js';
import { upsertDiscovered } from '../../src/store/syncStatusRepo.js';
import { DATABASE_KINDS, useMigratedDatabase } from './helpers.js';

const T0 = new Date(Date.UTC(2026, 0, 5, 12));
const draft = (id: string) => ({
  id,
  subject: `Subject ${id}`,
  body: 'Thanks for the call',
  to: ['a@b.example'],
});

describe.each(DATABASE_KINDS)('follow-up drafts of a write-back batch (%s)', (kind) => {
  const database = useMigratedDatabase(kind);

  it('lists a batch’s drafts in one read and marks only the given call’s drafts written', async () => {
    const db = database().db.prisma;
    await saveFollowupDrafts(db, 'call_f1', [draft('d1'), draft('d2')], T0);
    await saveFollowupDrafts(db, 'call_f2', [draft('d1')], T0);

    const byCall = await listFollowupDraftsOf(db, ['call_f1', 'call_f2', 'call_none']);
    expect(byCall.get('call_f1')?.map((d) => d.draftId)).toEqual(['d1', 'd2']);
    expect(byCall.get('call_f2')?.map((d) => d.draftId)).toEqual(['d1']);
    expect(byCall.has('call_none')).toBe(false);

    await markFollowupsWritten(
      db,
      'call_f1',
      [
        { draftId: 'd1', crmId: 'note_1' },
        { draftId: 'd2', crmId: 'note_2' },
      ],
      T0,
    );
    expect((await listFollowupDrafts(db, 'call_f1')).map((d) => d.crmId)).toEqual(['note_1', 'note_2']);
    // The same draft id on another call is left alone.
    expect((await listFollowupDrafts(db, 'call_f2')).map((d) => d.crmId)).toEqual([null]);
  });

  it('claims made together take one statement; a call claimed twice at once wins once', async () => {
    const db = database().db.prisma;
    for (const id of ['cl_1', 'cl_2', 'cl_3'])
      await upsertDiscovered(db, { callId: id, crm: 'hubspot', now: T0 });
    expect(await claimFollowupGeneration(db, 'cl_3', 'hubspot', T0)).toBe(true);
    let statements = 0;
    const counted = new Proxy(db, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (prop !== '$queryRaw' || typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          statements++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    }) as Db;
    const claims = await Promise.all(
      ['cl_1', 'cl_2', 'cl_2', 'cl_3', 'cl_none'].map((id) =>
        claimFollowupGeneration(counted, id, 'hubspot', T0),
      ),
    );
    expect(claims).toEqual([true, true, false, false, false]);
    expect(statements).toBe(1);
    // Claimed now: a later claim is refused.
    expect(await claimFollowupGeneration(counted, 'cl_1', 'hubspot', T0)).toBe(false);
  });

  it('records an answer in one go: its new drafts, in order of addressees, and the settled claim', async () => {
    const db = database().db.prisma;
    const settledAt = async (id: string) =>
      (await db.syncStatus.findUnique({ where: { callId_crm: { callId: id, crm: 'hubspot' } } }))
        ?.followupsSettledAt ?? null;
    for (const id of ['ans_1', 'ans_empty', 'ans_unclaimed'])
      await upsertDiscovered(db, { callId: id, crm: 'hubspot', now: T0 });
    expect(await claimFollowupGeneration(db, 'ans_1', 'hubspot', T0)).toBe(true);
    expect(await claimFollowupGeneration(db, 'ans_empty', 'hubspot', T0)).toBe(true);
    const two = { ...draft('a2'), to: ['z@b.example', 'a@b.example'] };
    await saveFollowupAnswer(db, { callId: 'ans_1', crm: 'hubspot', drafts: [draft('a1'), two], now: T0 });
    // The same answer again (a retry after a lost reply) stores nothing twice.
    await saveFollowupAnswer(db, { callId: 'ans_1', crm: 'hubspot', drafts: [draft('a1')], now: T0 });
    await saveFollowupAnswer(db, { callId: 'ans_empty', crm: 'hubspot', drafts: [], now: T0 });
    await saveFollowupAnswer(db, { callId: 'ans_unclaimed', crm: 'hubspot', drafts: [], now: T0 });

    const stored = await listFollowupDrafts(db, 'ans_1');
    expect(stored.map((d) => [d.draftId, d.to])).toEqual([
      ['a1', ['a@b.example']],
      ['a2', ['z@b.example', 'a@b.example']],
    ]);
    expect(await settledAt('ans_1')).toEqual(T0);
    expect(await settledAt('ans_empty')).toEqual(T0);
    // No claim, nothing to settle.
    expect(await settledAt('ans_unclaimed')).toBeNull();
  });

  it('claims on the live lane, even when bulk work submitted the first claim of the batch', async () => {
    const db = database().db.prisma;
    for (const id of ['lane_1', 'lane_2'])
      await upsertDiscovered(db, { callId: id, crm: 'hubspot', now: T0 });
    const lanes: boolean[] = [];
    const watched = new Proxy(db, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (prop !== '$queryRaw' || typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          lanes.push(isLive());
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    }) as Db;
    // adoptWritten claims from bulk work; a follow-up request's claim comes from the live lane.
    const claims = await Promise.all([
      claimFollowupGeneration(watched, 'lane_1', 'hubspot', T0),
      runAsLive(() => claimFollowupGeneration(watched, 'lane_2', 'hubspot', T0)),
    ]);
    expect(claims).toEqual([true, true]);
    expect(lanes).toEqual([true]);
  });
});
