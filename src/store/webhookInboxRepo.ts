import { Prisma, type WebhookInbox as WebhookInboxRow } from '../generated/prisma/client.js';
import type { Db } from './database.js';
import { unnestRows, type Columns } from './unnest.js';

/**
 * Every webhook delivery (table webhook_inbox), stored before the receiver answers 2xx; the work
 * happens afterwards from the stored row. An event id is unique among stored events (outcomes
 * accepted, processed, failed); a second delivery of it is kept as a 'duplicate' row, and a
 * delivery with a bad signature as a 'rejected' row, neither claiming the id.
 */
export type WebhookOutcome = 'accepted' | 'duplicate' | 'rejected' | 'processed' | 'failed';

export interface WebhookInboxRecord {
  id: number;
  eventId: string | null;
  type: string | null;
  callId: string | null;
  rawBody: string;
  signatureOk: boolean;
  receivedAt: Date;
  processedAt: Date | null;
  outcome: WebhookOutcome;
  rejectReason: string | null;
}

const OUTCOMES: readonly string[] = ['accepted', 'duplicate', 'rejected', 'processed', 'failed'];

function toWebhookInbox(row: WebhookInboxRow): WebhookInboxRecord {
  if (!OUTCOMES.includes(row.outcome))
    throw new Error(`webhook_inbox ${row.id}: unknown outcome "${row.outcome}"`);
  return {
    id: Number(row.id),
    eventId: row.eventId,
    type: row.type,
    callId: row.callId,
    rawBody: row.rawBody,
    signatureOk: row.signatureOk,
    receivedAt: row.receivedAt,
    processedAt: row.processedAt,
    outcome: row.outcome as WebhookOutcome,
    rejectReason: row.rejectReason,
  };
}

export interface InboxDelivery {
  eventId: string;
  type: string;
  callId: string | null;
  rawBody: string;
  receivedAt: Date;
  /**
   * When the caller routes the event in the same transaction, it is stored as 'processed' at
   * once (one statement fewer on the webhook's critical path).
   */
  processedAt?: Date | undefined;
}

interface InboxRowRaw {
  id: bigint;
  event_id: string | null;
  type: string | null;
  call_id: string | null;
  raw_body: string;
  signature_ok: boolean;
  received_at: Date;
  processed_at: Date | null;
  outcome: string;
  reject_reason: string | null;
}

/**
 * Stores a verified delivery once. The first delivery of an event id is 'accepted' (or
 * 'processed', see `processedAt`) with `duplicate: false`; a later one is recorded as 'duplicate'
 * and returns the original row.
 */
export async function insertWebhookOnce(
  db: Db,
  delivery: InboxDelivery,
): Promise<{ duplicate: boolean; record: WebhookInboxRecord }> {
  const input = unnestRows(DELIVERY_COLUMNS, [deliveryValues(delivery)], 'input');
  const inserted = await db.$queryRaw<InboxRowRaw[]>`${storedFrom(input)}`;
  const row = inserted[0];
  if (row) {
    return {
      duplicate: false,
      record: toWebhookInbox({
        id: row.id,
        eventId: row.event_id,
        type: row.type,
        callId: row.call_id,
        rawBody: row.raw_body,
        signatureOk: row.signature_ok,
        receivedAt: row.received_at,
        processedAt: row.processed_at,
        outcome: row.outcome,
        rejectReason: row.reject_reason,
      }),
    };
  }
  await db.$executeRaw`${duplicatesFrom(input)}`;
  const original = await findStoredEvent(db, delivery.eventId);
  if (!original) throw new Error(`webhook_inbox: event ${delivery.eventId} conflicted but was not found`);
  return { duplicate: true, record: original };
}

/** The columns of a source of verified deliveries (storedFrom, duplicatesFrom), one row each from deliveryValues. */
export const DELIVERY_COLUMNS: Columns = [
  ['event_id', 'text'],
  ['type', 'text'],
  ['call_id', 'text'],
  ['raw_body', 'text'],
  ['received_at', 'timestamptz'],
  ['processed_at', 'timestamptz'],
];

export function deliveryValues(d: InboxDelivery): unknown[] {
  return [d.eventId, d.type, d.callId, d.rawBody, d.receivedAt, d.processedAt ?? null];
}

/**
 * The statement that stores the deliveries of `source` whose event id is not stored yet
 * ('processed' when they have processed_at, else 'accepted'); returns the rows stored. The others
 * go in with duplicatesFrom. Used by insertWebhookOnce and the webhook inbox's single statement
 * (src/store/inboxRound.ts).
 */
export function storedFrom(source: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO webhook_inbox (event_id, type, call_id, raw_body, signature_ok, received_at, processed_at, outcome)
    SELECT event_id, type, call_id, raw_body, true, received_at, processed_at,
           CASE WHEN processed_at IS NULL THEN 'accepted' ELSE 'processed' END
    FROM ${source}
    ON CONFLICT (event_id) WHERE outcome IN ('accepted', 'processed', 'failed') DO NOTHING
    RETURNING *`;
}

/** Keeps the deliveries of `source` as 'duplicate' rows (they claim no event id). */
export function duplicatesFrom(source: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO webhook_inbox (event_id, type, call_id, raw_body, signature_ok, received_at, outcome)
    SELECT event_id, type, call_id, raw_body, true, received_at, 'duplicate' FROM ${source}`;
}

/** Records a delivery that was refused (bad signature, unparsable body, too large). */
export async function recordRejectedWebhook(
  db: Db,
  input: {
    rawBody: string;
    reason: string;
    signatureOk: boolean;
    receivedAt: Date;
    eventId?: string | null;
    type?: string | null;
    callId?: string | null;
  },
): Promise<WebhookInboxRecord> {
  const row = await db.webhookInbox.create({
    data: {
      eventId: input.eventId ?? null,
      type: input.type ?? null,
      callId: input.callId ?? null,
      rawBody: input.rawBody,
      signatureOk: input.signatureOk,
      receivedAt: input.receivedAt,
      outcome: 'rejected',
      rejectReason: input.reason,
    },
  });
  return toWebhookInbox(row);
}

/** The stored (accepted, processed or failed) row of an event id. */
export async function findStoredEvent(db: Db, eventId: string): Promise<WebhookInboxRecord | null> {
  const row = await db.webhookInbox.findFirst({
    where: { eventId, outcome: { in: ['accepted', 'processed', 'failed'] } },
  });
  return row ? toWebhookInbox(row) : null;
}

/** Marks an accepted event done. False when it was not in 'accepted' (already handled). */
export async function markWebhookProcessed(db: Db, id: number, now: Date): Promise<boolean> {
  const { count } = await db.webhookInbox.updateMany({
    where: { id: BigInt(id), outcome: 'accepted' },
    data: { outcome: 'processed', processedAt: now },
  });
  return count === 1;
}

/** Marks an accepted event as failed with the reason (it stays for an operator to replay). */
export async function markWebhookFailed(db: Db, id: number, reason: string, now: Date): Promise<boolean> {
  const { count } = await db.webhookInbox.updateMany({
    where: { id: BigInt(id), outcome: 'accepted' },
    data: { outcome: 'failed', processedAt: now, rejectReason: reason.slice(0, 2000) },
  });
  return count === 1;
}

/** Accepted events not yet handled, oldest first: the work left after a crash. */
export async function listUnprocessedWebhooks(db: Db, limit = 100): Promise<WebhookInboxRecord[]> {
  const rows = await db.webhookInbox.findMany({
    where: { outcome: 'accepted' },
    orderBy: [{ receivedAt: 'asc' }, { id: 'asc' }],
    take: limit,
  });
  return rows.map(toWebhookInbox);
}

/** Puts failed events back to 'accepted' so they are handled again; returns how many. */
export async function replayFailedWebhooks(db: Db, options: { eventIds?: string[] } = {}): Promise<number> {
  const { count } = await db.webhookInbox.updateMany({
    where: { outcome: 'failed', ...(options.eventIds ? { eventId: { in: options.eventIds } } : {}) },
    data: { outcome: 'accepted', processedAt: null, rejectReason: null },
  });
  return count;
}

/** Deletes rows received before `before` that need nothing more (all but accepted). */
export async function pruneWebhookInbox(db: Db, before: Date): Promise<number> {
  const { count } = await db.webhookInbox.deleteMany({
    where: { receivedAt: { lt: before }, outcome: { not: 'accepted' } },
  });
  return count;
}
