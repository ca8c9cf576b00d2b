import { describe, expect, it } from 'vitest';
import {
  findStoredEvent,
  insertWebhookOnce,
  listUnprocessedWebhooks,
  markWebhookFailed,
  markWebhookProcessed,
  pruneWebhookInbox,
  recordRejectedWebhook,
  replayFailedWebhooks,
} from '../../src/store/webhookInboxRepo.js';
import { classifyWebhookBody } from '../../src/http/webhookIntake.js';
import { DATABASE_KINDS, useMigratedDatabase } from './helpers.js';

const T0 = new Date('2026-03-02T10:00:00.000Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);
const delivery = (eventId: string, s = 0) => ({
  eventId,
  type: 'analysis.ready',
  callId: 'call_1',
  rawBody: JSON.stringify({ id: eventId, type: 'analysis.ready', data: { call_id: 'call_1' } }),
  receivedAt: at(s),
});

describe.each(DATABASE_KINDS)('WebhookInboxRepo on %s', (kind) => {
  const get = useMigratedDatabase(kind);

  it('stores an event once; a redelivery is recorded as a duplicate pointing at the original', async () => {
    const { prisma } = get().db;
    const first = await insertWebhookOnce(prisma, delivery('evt_1'));
    expect(first.duplicate).toBe(false);
    expect(first.record).toMatchObject({
      eventId: 'evt_1',
      outcome: 'accepted',
      signatureOk: true,
      receivedAt: at(0),
    });

    const again = await insertWebhookOnce(prisma, delivery('evt_1', 5));
    expect(again).toEqual({ duplicate: true, record: first.record });
    const rows = await prisma.webhookInbox.findMany({ where: { eventId: 'evt_1' }, orderBy: { id: 'asc' } });
    expect(rows.map((r) => r.outcome)).toEqual(['accepted', 'duplicate']);
  });

  it('stays a duplicate after the original was processed or failed', async () => {
    const { prisma } = get().db;
    const { record } = await insertWebhookOnce(prisma, delivery('evt_2'));
    expect(await markWebhookProcessed(prisma, record.id, at(1))).toBe(true);
    expect(await markWebhookProcessed(prisma, record.id, at(2))).toBe(false);
    expect((await insertWebhookOnce(prisma, delivery('evt_2', 3))).duplicate).toBe(true);
    expect(await findStoredEvent(prisma, 'evt_2')).toMatchObject({
      outcome: 'processed',
      processedAt: at(1),
    });
  });

  it('keeps a rejected delivery without letting it claim the event id', async () => {
    const { prisma } = get().db;
    const rejected = await recordRejectedWebhook(prisma, {
      rawBody: '{"id":"evt_3"}',
      reason: 'bad signature',
      signatureOk: false,
      eventId: 'evt_3',
      receivedAt: at(0),
    });
    expect(rejected).toMatchObject({
      outcome: 'rejected',
      rejectReason: 'bad signature',
      signatureOk: false,
    });
    expect((await insertWebhookOnce(prisma, delivery('evt_3', 1))).duplicate).toBe(false);
  });

  // Found by `npm run chaos` (hostile-webhooks): signed garbage with NUL bytes was answered 503 on
  // every retry, because PostgreSQL text cannot hold U+0000.
  it('stores what the receiver makes of authentic bodies carrying NUL, raw or escaped', async () => {
    const { prisma } = get().db;
    const garbage = Buffer.concat([Buffer.from('garbage'), Buffer.from([0, 0xff, 0, 0x41])]);
    const escaped = Buffer.from(
      JSON.stringify({
        id: 'evt_nul',
        type: 'call.completed',
        created_at: T0.toISOString(),
        data: { call_id: 'c\u0000' },
      }),
    );
    for (const body of [garbage, escaped]) {
      const intake = classifyWebhookBody(body, T0.getTime());
      expect(intake.outcome).toBe('rejected');
      const { record } = intake;
      const stored = await recordRejectedWebhook(prisma, {
        rawBody: record.rawBody,
        reason: record.rejectReason!,
        signatureOk: true,
        eventId: record.eventId,
        callId: record.callId,
        receivedAt: at(0),
      });
      expect(stored.outcome).toBe('rejected');
    }
    const rows = await prisma.webhookInbox.findMany({ where: { rawBody: { startsWith: 'garbage' } } });
    expect(rows.map((r) => r.rawBody)).toEqual(['garbage\uFFFD\uFFFD\uFFFDA']);
  });

  it('lists what is left to do after a crash, and replays failed events', async () => {
    const { prisma } = get().db;
    await prisma.webhookInbox.deleteMany();
    const a = await insertWebhookOnce(prisma, delivery('evt_a', 1));
    const b = await insertWebhookOnce(prisma, delivery('evt_b', 2));
    expect((await listUnprocessedWebhooks(prisma)).map((r) => r.eventId)).toEqual(['evt_a', 'evt_b']);

    expect(await markWebhookFailed(prisma, a.record.id, 'CRM_REJECTED: no such owner', at(3))).toBe(true);
    await markWebhookProcessed(prisma, b.record.id, at(3));
    expect(await listUnprocessedWebhooks(prisma)).toEqual([]);
    expect(await findStoredEvent(prisma, 'evt_a')).toMatchObject({
      outcome: 'failed',
      rejectReason: 'CRM_REJECTED: no such owner',
    });

    expect(await replayFailedWebhooks(prisma)).toBe(1);
    expect((await listUnprocessedWebhooks(prisma)).map((r) => r.eventId)).toEqual(['evt_a']);

    // Pruning keeps what still needs work.
    expect(await pruneWebhookInbox(prisma, at(60))).toBe(1);
    expect((await prisma.webhookInbox.findMany()).map((r) => r.eventId)).toEqual(['evt_a']);
  });
});
