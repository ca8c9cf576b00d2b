import { describe, expect, it } from 'vitest';
import { saveFollowupDrafts } from '../../src/store/followupRepo.js';
import { upsertDiscovered } from '../../src/store/syncStatus/discovered.js';
import { transitionSyncStatus } from '../../src/store/syncStatus/transitions.js';
import { createDbInbox } from '../../src/worker/inbox.js';
import { DATABASE_KINDS, useMigratedDatabase } from '../store/helpers.js';

/**
 * The inbox group-commits deliveries that arrive together: each must still be stored once, in the
 * order of its call's events, before its store() resolves, and one bad delivery must not fail the
 * others written with it.
 */
const T0 = Date.UTC(2026, 0, 5, 12);

function call(id: string, status: string) {
  return {
    id,
    status,
    created_at: '2026-01-05T11:00:00.000Z',
    participant: { name: 'Jane Doe', email: `${id}@acme.example`, company: 'Acme Corp' },
  };
}

function record(eventId: string, type: string, data: Record<string, unknown>, receivedAt: number) {
  const rawBody = JSON.stringify({ id: eventId, type, created_at: new Date(receivedAt).toISOString(), data });
  return { eventId, type, callId: String(data.call_id), rawBody, outcome: 'accepted' as const, receivedAt };
}

describe.each(DATABASE_KINDS)('the webhook inbox under concurrent deliveries (%s)', (kind) => {
  const database = useMigratedDatabase(kind);

  it('stores each event once and applies a call’s events in order, all in one go', async () => {
    const prisma = database().db.prisma;
    const inbox = createDbInbox({ db: prisma, crm: 'hubspot' });
    const deliveries = [
      ...Array.from({ length: 12 }, (_, i) =>
        record(
          `evt_${i}`,
          'call.completed',
          { call_id: `call_${i}`, call: call(`call_${i}`, 'completed') },
          T0,
        ),
      ),
      // The same event delivered twice, and a second event of call_0 that joins its queued job.
      record('evt_3', 'call.completed', { call_id: 'call_3', call: call('call_3', 'completed') }, T0),
      record('evt_a0', 'analysis.ready', { call_id: 'call_0', call: call('call_0', 'analyzed') }, T0 + 5),
    ];
    const results = await Promise.all(deliveries.map((d) => inbox.store(d)));
    expect(results.filter((r) => r.duplicate)).toHaveLength(1);
    expect(results[12]).toEqual({ duplicate: true });

    const inboxRows = await prisma.webhookInbox.groupBy({ by: ['outcome'], _count: true });
    expect(Object.fromEntries(inboxRows.map((r) => [r.outcome, r._count]))).toEqual({
      processed: 13,
      duplicate: 1,
    });
    expect(await prisma.syncStatus.count()).toBe(12);
    expect(await prisma.syncEvent.count({ where: { toState: 'discovered' } })).toBe(12);
    const jobs = await prisma.job.findMany({ where: { kind: 'writeback' } });
    expect(jobs).toHaveLength(12);
    // analysis.ready came after call.completed: the queued job now runs at once, with the analysed copy.
    const job0 = jobs.find((j) => j.key === 'writeback:call_0')!;
    expect(job0.runAt.getTime()).toBe(T0 + 5);
    expect((job0.payload as { call: { status: string } }).call.status).toBe('analyzed');
    expect(jobs.find((j) => j.key === 'writeback:call_1')!.runAt.getTime()).toBeGreaterThan(T0 + 60_000);
  });

  it('a call.started is committed while a batch of bulk deliveries is still being written', async () => {
    const prisma = database().db.prisma;
    // The bulk client's statements and transactions wait until released: a flush stuck behind bulk work.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const bulkDb = new Proxy(prisma, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (prop !== '$transaction' && prop !== '$queryRaw') return value;
        return async (...args: unknown[]) => {
          await held;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const inbox = createDbInbox({ db: bulkDb, liveDb: prisma, crm: 'hubspot' });
    const bulk = inbox.store(
      record('evt_done', 'call.completed', { call_id: 'call_b', call: call('call_b', 'completed') }, T0),
    );
    const started = await inbox.store(
      record('evt_start', 'call.started', { call_id: 'call_l', call: call('call_l', 'in_progress') }, T0),
    );
    expect(started).toEqual({ duplicate: false });
    const keys = async () =>
      (
        await prisma.job.findMany({
          where: { key: { in: ['context:call_l', 'writeback:call_b'] } },
          orderBy: { key: 'asc' },
        })
      ).map((j) => j.key);
    expect(await keys()).toEqual(['context:call_l']);

    release();
    await bulk;
    expect(await keys()).toEqual(['context:call_l', 'writeback:call_b']);
  });

  it('one delivery the database refuses fails alone; the others are stored', async () => {
    const prisma = database().db.prisma;
    const inbox = createDbInbox({ db: prisma, crm: 'hubspot' });
    const good = Array.from({ length: 6 }, (_, i) =>
      record(
        `evt_g${i}`,
        'call.completed',
        { call_id: `call_g${i}`, call: call(`call_g${i}`, 'completed') },
        T0,
      ),
    );
    // A valid event whose draft PostgreSQL refuses (text cannot hold NUL), written in the same
    // statement as the others: that statement fails, and each is then written alone.
    const bad = record(
      'evt_bad',
      'followup.generated',
      { call_id: 'call_bad', followup: { id: 'd1', subject: 'a\u0000b', body: 'Hi', to: [] } },
      T0,
    );
    const results = await Promise.allSettled(
      [...good.slice(0, 3), bad, ...good.slice(3)].map((d) => inbox.store(d)),
    );
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
      'fulfilled',
    ]);
    expect(
      await prisma.webhookInbox.count({ where: { outcome: 'processed', eventId: { startsWith: 'evt_g' } } }),
    ).toBe(6);
    expect(await prisma.webhookInbox.count({ where: { eventId: 'evt_bad' } })).toBe(0);
    expect(await prisma.syncStatus.count({ where: { callId: 'call_bad' } })).toBe(0);
  });

  it('queues a job for a new follow-up draft only: one its generation stored is written by that job', async () => {
    const prisma = database().db.prisma;
    const inbox = createDbInbox({ db: prisma, crm: 'hubspot' });
    const draft = (id: string) => ({ id, subject: 'Next steps', body: 'Hi', to: ['jane@acme.example'] });
    // The write-back job that asked for d_gen stored it from the answer, before its webhook came.
    await saveFollowupDrafts(prisma, 'call_f', [draft('d_gen')], new Date(T0));
    const deliveries = [
      record('evt_f1', 'followup.generated', { call_id: 'call_f', followup: draft('d_gen') }, T0 + 1),
      record('evt_f2', 'followup.generated', { call_id: 'call_h', followup: draft('d_new') }, T0 + 1),
      record('evt_f3', 'followup.generated', { call_id: 'call_h2', followup: draft('d_new2') }, T0 + 1),
    ];
    const results = await Promise.all(deliveries.map((d) => inbox.store(d)));
    expect(results).toEqual([{ duplicate: false }, { duplicate: false }, { duplicate: false }]);
    const jobs = await prisma.job.findMany({
      where: { key: { in: ['writeback:call_f', 'writeback:call_h', 'writeback:call_h2'] } },
    });
    expect(jobs.map((j) => j.key).sort()).toEqual(['writeback:call_h', 'writeback:call_h2']);
    const stored = await prisma.callFollowup.findMany({
      where: { callId: { in: ['call_f', 'call_h', 'call_h2'] } },
    });
    expect(stored.map((d) => d.draftId).sort()).toEqual(['d_gen', 'd_new', 'd_new2']);
    // Every delivery is recorded and its call known, job or not.
    expect(
      await prisma.syncStatus.count({ where: { callId: { in: ['call_f', 'call_h', 'call_h2'] } } }),
    ).toBe(3);
  });

  it('queues no safety check for a call.completed that comes after the call was written back', async () => {
    const prisma = database().db.prisma;
    const inbox = createDbInbox({ db: prisma, crm: 'hubspot' });
    // call_w: written back before its call.completed was (re)delivered; call_o: still open.
    await upsertDiscovered(prisma, { callId: 'call_w', crm: 'hubspot', now: new Date(T0) });
    for (const to of ['awaiting_analysis', 'writing_back', 'written_back'] as const) {
      await transitionSyncStatus(prisma, { callId: 'call_w', crm: 'hubspot', to, now: new Date(T0) });
    }
    await Promise.all([
      inbox.store(
        record('evt_c1', 'call.completed', { call_id: 'call_w', call: call('call_w', 'completed') }, T0 + 5),
      ),
      inbox.store(
        record('evt_c2', 'call.completed', { call_id: 'call_o', call: call('call_o', 'completed') }, T0 + 5),
      ),
    ]);
    const jobs = await prisma.job.findMany({
      where: { key: { in: ['writeback:call_w', 'writeback:call_o'] } },
    });
    expect(jobs.map((j) => j.key)).toEqual(['writeback:call_o']);
    expect(await prisma.webhookInbox.count({ where: { eventId: { in: ['evt_c1', 'evt_c2'] } } })).toBe(2);
  });
});
