import { describe, expect, it } from 'vitest';
import { storeRound } from '../../src/store/inboxRound.js';
import { delivery, T0 } from './roundDelivery.js';
import { ACTIVE_SYNC_STATES } from '../../src/sync/states.js';
import { upsertDiscovered } from '../../src/store/syncStatus/discovered.js';
import { transitionSyncStatus } from '../../src/store/syncStatus/transitions.js';
import { openDatabase } from '../../src/store/database.js';
import { DATABASE_KINDS, useMigratedDatabase } from './helpers.js';

/**
 * The inbox's one statement per round: what its CTEs pass on to each other (which deliveries are
 * fresh, which calls are in which state, which drafts are new) decides what is stored and queued.
 */
describe.each(DATABASE_KINDS)('the inbox round statement on %s', (kind) => {
  const get = useMigratedDatabase(kind);

  it('stores a repeated event id once, by its first delivery, and queues work for that one only', async () => {
    const { prisma } = get().db;
    const results = await storeRound(prisma, 'hubspot', [
      delivery('r1_evt_1', 'r1_call_a'),
      delivery('r1_evt_1', 'r1_call_b'),
      delivery('r1_evt_2', 'r1_call_c', null),
    ]);
    expect(results).toEqual([
      { duplicate: false, job: { id: expect.any(Number), created: true } },
      { duplicate: true, job: null },
      { duplicate: false, job: null },
    ]);
    const rows = await prisma.webhookInbox.findMany({
      where: { callId: { startsWith: 'r1_' } },
      orderBy: { id: 'asc' },
    });
    expect(rows.map((r) => [r.eventId, r.callId, r.outcome])).toEqual([
      ['r1_evt_1', 'r1_call_a', 'processed'],
      ['r1_evt_2', 'r1_call_c', 'processed'],
      ['r1_evt_1', 'r1_call_b', 'duplicate'],
    ]);
    // Only fresh deliveries record their call.
    const calls = await prisma.syncStatus.findMany({
      where: { callId: { startsWith: 'r1_' } },
      orderBy: { callId: 'asc' },
    });
    expect(calls.map((c) => [c.callId, c.state, c.participantEmail])).toEqual([
      ['r1_call_a', 'discovered', 'r1_call_a@acme.example'],
      ['r1_call_c', 'discovered', 'r1_call_c@acme.example'],
    ]);
    expect(
      (await prisma.job.findMany({ where: { key: { startsWith: 'writeback:r1_' } } })).map((j) => j.key),
    ).toEqual(['writeback:r1_call_a']);
  });

  it('a later round joins the queued job, and a redelivery is a duplicate with nothing queued', async () => {
    const { prisma } = get().db;
    const [first] = await storeRound(prisma, 'hubspot', [delivery('r2_evt_1', 'r2_call_a')]);
    const later = await storeRound(prisma, 'hubspot', [
      delivery('r2_evt_1', 'r2_call_a'),
      delivery('r2_evt_2', 'r2_call_b'),
    ]);
    const again = await storeRound(prisma, 'hubspot', [delivery('r2_evt_3', 'r2_call_a')]);
    expect(later[0]).toEqual({ duplicate: true, job: null });
    expect(later[1]!.job!.created).toBe(true);
    expect(again[0]).toEqual({ duplicate: false, job: { id: first!.job!.id, created: false } });
    expect(await prisma.job.count({ where: { key: { startsWith: 'writeback:r2_' } } })).toBe(2);
  });

  it('queues a job only while its call is in a state that needs it', async () => {
    const { prisma } = get().db;
    await upsertDiscovered(prisma, { callId: 'r3_call_w', crm: 'hubspot', now: T0 });
    for (const to of ['awaiting_analysis', 'writing_back', 'written_back'] as const) {
      await transitionSyncStatus(prisma, { callId: 'r3_call_w', crm: 'hubspot', to, now: T0 });
    }
    const results = await storeRound(prisma, 'hubspot', [
      delivery('r3_evt_w', 'r3_call_w', { whileIn: ACTIVE_SYNC_STATES }),
      delivery('r3_evt_n', 'r3_call_n', { whileIn: ACTIVE_SYNC_STATES }),
    ]);
    expect(results.map((r) => [r.duplicate, r.job?.created ?? null])).toEqual([
      [false, null],
      [false, true],
    ]);
    expect(
      (await prisma.job.findMany({ where: { key: { startsWith: 'writeback:r3_' } } })).map((j) => j.key),
    ).toEqual(['writeback:r3_call_n']);
  });

  it('keeps each draft once and queues a draft-only job only for a draft new to the store', async () => {
    const { prisma } = get().db;
    const draftJob = { onlyForNewDraft: true };
    await storeRound(prisma, 'hubspot', [delivery('r4_evt_1', 'r4_call_a', null, 'd1')]);
    const results = await storeRound(prisma, 'hubspot', [
      delivery('r4_evt_2', 'r4_call_a', draftJob, 'd1'),
      delivery('r4_evt_3', 'r4_call_b', draftJob, 'd2'),
    ]);
    expect(results.map((r) => r.job?.created ?? null)).toEqual([null, true]);
    const drafts = await prisma.callFollowup.findMany({
      where: { callId: { startsWith: 'r4_' } },
      orderBy: { callId: 'asc' },
    });
    expect(drafts.map((d) => [d.callId, d.draftId, d.toAddresses, d.receivedAt])).toEqual([
      ['r4_call_a', 'd1', ['a@acme.example'], T0],
      ['r4_call_b', 'd2', ['a@acme.example'], T0],
    ]);
    expect(
      (await prisma.job.findMany({ where: { key: { startsWith: 'writeback:r4_' } } })).map((j) => j.key),
    ).toEqual(['writeback:r4_call_b']);
  });

  it('gates on the state the call is in: a known call still at work gets its job', async () => {
    const { prisma } = get().db;
    await upsertDiscovered(prisma, { callId: 'r6_call_a', crm: 'hubspot', now: T0 });
    await transitionSyncStatus(prisma, {
      callId: 'r6_call_a',
      crm: 'hubspot',
      to: 'awaiting_analysis',
      now: T0,
    });
    const [result] = await storeRound(prisma, 'hubspot', [
      delivery('r6_evt_1', 'r6_call_a', { whileIn: ACTIVE_SYNC_STATES }),
    ]);
    expect(result!.job?.created).toBe(true);
    // Its first sync_event was written when it was discovered, not again.
    expect(await prisma.syncEvent.count({ where: { callId: 'r6_call_a' } })).toBe(2);
    await storeRound(prisma, 'hubspot', [delivery('r6_evt_2', 'r6_call_b')]);
    expect(
      (await prisma.syncEvent.findMany({ where: { callId: 'r6_call_b' } })).map((e) => [
        e.fromState,
        e.toState,
      ]),
    ).toEqual([[null, 'discovered']]);
  });

  it('a duplicate delivery stores neither its draft nor its call facts', async () => {
    const { prisma } = get().db;
    await storeRound(prisma, 'hubspot', [delivery('r7_evt_1', 'r7_call_a')]);
    const again = delivery('r7_evt_1', 'r7_call_a', null, 'd9');
    again.call = { participantEmail: 'changed@acme.example' };
    const [result] = await storeRound(prisma, 'hubspot', [again]);
    expect(result!.duplicate).toBe(true);
    expect(await prisma.callFollowup.count({ where: { callId: 'r7_call_a' } })).toBe(0);
    const status = await prisma.syncStatus.findFirst({ where: { callId: 'r7_call_a' } });
    expect(status!.participantEmail).toBe('r7_call_a@acme.example');
  });

  it("keeps a draft's addressees in their order", async () => {
    const { prisma } = get().db;
    const to = ['zed@acme.example', 'amy@acme.example', 'mo@acme.example', 'bea@acme.example'];
    const d = delivery('r8_evt_1', 'r8_call_a', null, 'd1');
    d.draft = { ...d.draft!, to };
    await storeRound(prisma, 'hubspot', [d]);
    expect((await prisma.callFollowup.findFirst({ where: { callId: 'r8_call_a' } }))!.toAddresses).toEqual(
      to,
    );
  });

  it('a newer analysed copy of the call replaces the one on the job it joins, in the same statement', async () => {
    const { prisma } = get().db;
    const withCall = (eventId: string, status: string) =>
      delivery(eventId, 'r9_call_a', {
        spec: {
          kind: 'writeback',
          key: 'writeback:r9_call_a',
          payload: { callId: 'r9_call_a', call: { id: 'r9_call_a', status } },
          priority: 5,
          now: T0,
        },
      });
    await storeRound(prisma, 'hubspot', [withCall('r9_evt_1', 'completed')]);
    await storeRound(prisma, 'hubspot', [withCall('r9_evt_2', 'analyzed')]);
    // An older copy that comes later (a retried call.completed) leaves the analysed one.
    await storeRound(prisma, 'hubspot', [withCall('r9_evt_3', 'completed')]);
    const jobs = await prisma.job.findMany({ where: { key: 'writeback:r9_call_a' } });
    expect(jobs.map((j) => (j.payload as { call: { status: string } }).call.status)).toEqual(['analyzed']);
  });

  it('refuses two deliveries of one call in a round (they would race in one statement)', async () => {
    const { prisma } = get().db;
    await expect(
      storeRound(prisma, 'hubspot', [delivery('r5_evt_1', 'r5_call_a'), delivery('r5_evt_2', 'r5_call_a')]),
    ).rejects.toThrow(/one delivery per call/);
  });

  it.runIf(kind === 'postgres')(
    'on PostgreSQL the statement is prepared once per connection and its plan kept, whatever the round size',
    async () => {
      const { target } = get();
      // One connection, so that the statements seen are this connection's.
      const one = await openDatabase({ databaseUrl: target.url, dataDir: target.dataDir, poolSize: 1 });
      try {
        await storeRound(one.prisma, 'hubspot', [delivery('r10_evt_1', 'r10_call_a')]);
        await storeRound(one.prisma, 'hubspot', [
          delivery('r10_evt_2', 'r10_call_b', null, 'd1'),
          delivery('r10_evt_3', 'r10_call_c'),
        ]);
        const prepared = await one.prisma.$queryRaw<{ name: string }[]>`
          SELECT name FROM pg_prepared_statements WHERE name LIKE 'crm_sync_%'`;
        expect(prepared).toHaveLength(1);
      } finally {
        await one.close();
      }
    },
  );
});
