/**
 * Follow-up drafts the Service generated for a call, kept so that each is generated once
 * (POST /followups creates new drafts every time) and written to the CRM once per draft.
 */
import type { CrmName } from '../crm/types.js';
import { Prisma, type CallFollowup as CallFollowupRow } from '../generated/prisma/client.js';
import type { Db } from './database.js';
import { PREPARED, unnestRows, type Columns } from './unnest.js';

export interface FollowupDraftRecord {
  callId: string;
  draftId: string;
  subject: string;
  body: string;
  to: string[];
  createdAt: Date | null;
  /** The draft as the Service sent it (extra fields kept for the mapping). */
  raw: Record<string, unknown>;
  /** The CRM record it was written to; null until written. */
  crmId: string | null;
}

export interface DraftInput {
  id: string;
  subject: string;
  body: string;
  to?: string[] | null | undefined;
  created_at?: string | null | undefined;
  [extra: string]: unknown;
}

/** Stores drafts not yet known; returns how many were new. */
export async function saveFollowupDrafts(
  db: Db,
  callId: string,
  drafts: DraftInput[],
  now: Date,
): Promise<number> {
  const rows = await db.$queryRaw<
    unknown[]
  >`${PREPARED} ${draftsInsertFrom(draftRowsOf(callId, drafts, now))}`;
  return rows.length;
}

/** `drafts` of one call as a source for draftsInsertFrom; with `then`, read only after it (lockOrder.ts). */
export function draftRowsOf(
  callId: string,
  drafts: DraftInput[],
  now: Date,
  then = Prisma.empty,
): Prisma.Sql {
  const rows = unnestRows(
    DRAFT_COLUMNS,
    drafts.map((draft) => draftValues({ callId, draft, now })),
    'd',
  );
  return draftsSource(then === Prisma.empty ? rows : Prisma.sql`${rows} CROSS JOIN ${then}`);
}

/** The columns of the drafts draftsSource passes on (its rows from draftValues; `to` as JSON). */
export const DRAFT_COLUMNS: Columns = [
  ['call_id', 'text'],
  ['draft_id', 'text'],
  ['subject', 'text'],
  ['body', 'text'],
  ['to_json', 'jsonb'],
  ['draft_created_at', 'timestamptz'],
  ['raw', 'jsonb'],
  ['received_at', 'timestamptz'],
];

export function draftValues(input: { callId: string; draft: DraftInput; now: Date }): unknown[] {
  const r = draftRow(input);
  return [r.callId, r.draftId, r.subject, r.body, r.toAddresses, r.draftCreatedAt, r.raw, r.receivedAt];
}

/**
 * The drafts of `relation` (DRAFT_COLUMNS, and any more columns it has, kept) as a source for
 * draftsInsertFrom: `to_json` becomes the `to_addresses` array, in its order.
 */
export function draftsSource(relation: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`(SELECT d.*, ARRAY(SELECT a FROM jsonb_array_elements_text(d.to_json) WITH ORDINALITY AS t (a, i)
                                  ORDER BY i) AS to_addresses
                      FROM ${relation}) AS input`;
}

const DRAFT_INSERT_COLUMNS = Prisma.raw(
  'call_id, draft_id, subject, body, to_addresses, draft_created_at, raw, received_at',
);

/**
 * The statement that stores the drafts of `source` (see draftsSource) not yet known (a draft stored already, by its
 * generation or an earlier delivery, is left as it is); returns call_id and draft_id of the new
 * ones. One part of the webhook inbox's single statement (src/store/inboxRound.ts).
 */
export function draftsInsertFrom(source: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO call_followup (${DRAFT_INSERT_COLUMNS})
    SELECT ${DRAFT_INSERT_COLUMNS} FROM ${source}
    ON CONFLICT (call_id, draft_id) DO NOTHING
    RETURNING call_id, draft_id`;
}

function draftRow({ callId, draft, now }: { callId: string; draft: DraftInput; now: Date }) {
  const created = draft.created_at ? Date.parse(draft.created_at) : NaN;
  return {
    callId,
    draftId: draft.id,
    subject: draft.subject,
    body: draft.body,
    toAddresses: draft.to ?? [],
    draftCreatedAt: Number.isNaN(created) ? null : new Date(created),
    raw: JSON.parse(JSON.stringify(draft)) as object,
    receivedAt: now,
  };
}

export async function listFollowupDrafts(db: Db, callId: string): Promise<FollowupDraftRecord[]> {
  return (await listFollowupDraftsOf(db, [callId])).get(callId) ?? [];
}

/** listFollowupDrafts for many calls in one query (a write-back batch's), by call id. */
export async function listFollowupDraftsOf(
  db: Db,
  callIds: readonly string[],
): Promise<Map<string, FollowupDraftRecord[]>> {
  const out = new Map<string, FollowupDraftRecord[]>();
  if (callIds.length === 0) return out;
  const rows = await db.callFollowup.findMany({
    where: { callId: { in: [...new Set(callIds)] } },
    orderBy: [{ receivedAt: 'asc' }, { draftId: 'asc' }],
  });
  for (const record of rows.map(toDraftRecord)) {
    const list = out.get(record.callId) ?? [];
    list.push(record);
    out.set(record.callId, list);
  }
  return out;
}

function toDraftRecord(r: CallFollowupRow): FollowupDraftRecord {
  return {
    callId: r.callId,
    draftId: r.draftId,
    subject: r.subject,
    body: r.body,
    to: r.toAddresses,
    createdAt: r.draftCreatedAt,
    raw: (r.raw ?? {}) as Record<string, unknown>,
    crmId: r.crmId,
  };
}

/**
 * Locks the call's sync_status row (first, in the lock order: lockOrder.ts); its state as the lock
 * found it (a move committed while this waited included).
 */
export const lockCall = (callId: string, crm: CrmName) =>
  Prisma.sql`SELECT state FROM sync_status WHERE call_id = ${callId} AND crm = ${crm} FOR UPDATE`;
