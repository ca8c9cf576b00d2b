/**
 * Follow-up drafts the Service generated for a call, kept so that each is generated once
 * (POST /followups creates new drafts every time) and written to the CRM once per draft.
 */
import type { CrmName } from '../crm/types.js';
import { Prisma, type CallFollowup as CallFollowupRow } from '../generated/prisma/client.js';
import type { Db } from './database.js';
import { fenceHolds, fenceValues, heldSql, LeaseLostError, type Fence } from './fence.js';
import { draftsJobInsert } from './draftsJob.js';
import { after, CALL_ID_ORDER } from './lockOrder.js';
import { mergeWarnings } from './syncStatusRepo.js';
import { createGroupCommit, type GroupCommit } from '../util/groupCommit.js';
import { runAsLive } from './livePriority.js';
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
function draftRowsOf(callId: string, drafts: DraftInput[], now: Date, then = Prisma.empty): Prisma.Sql {
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
 * Marks that follow-ups were requested for this call and CRM, before the request is sent.
 * Returns false when they already were: then the drafts come from storage or from the
 * followup.generated webhook, never from a second generation. Claims made together (the
 * requests of a slot grant in bulk, which start at once) go in one statement, so a burst of them
 * costs one round trip, well inside the client's SEND_DEADLINE_MS.
 */
export async function claimFollowupGeneration(
  db: Db,
  callId: string,
  crm: CrmName,
  now: Date,
  /** The job run claiming: recorded with the claim; a run that lost its lease claims nothing. */
  fence?: Fence,
): Promise<boolean> {
  let claims = claimBatches.get(db);
  if (!claims) {
    // On the live lane whoever submitted first (adoptWritten claims from bulk work): a follow-up's
    // claim must not wait behind bulk statements on the embedded database.
    claims = createGroupCommit((batch: Claim[]) => runAsLive(() => claimAll(db, batch)), { maxBatch: 64 });
    claimBatches.set(db, claims);
  }
  const outcome = await claims.submit({ callId, crm, now, fence });
  if (outcome === 'fenced') throw new LeaseLostError(fence, `call ${callId}'s follow-up claim`);
  return outcome === 'claimed';
}

interface Claim {
  callId: string;
  crm: CrmName;
  now: Date;
  fence: Fence | undefined;
}

type ClaimOutcome = 'claimed' | 'taken' | 'fenced';

const claimBatches = new WeakMap<Db, GroupCommit<Claim, ClaimOutcome>>();

const CLAIM_COLUMNS: Columns = [
  ['call_id', 'text'],
  ['crm', 'text'],
  ['claimed_at', 'timestamptz'],
  ['job', 'bigint'],
  ['epoch', 'bigint'],
];

async function claimAll(db: Db, claims: Claim[]): Promise<ClaimOutcome[]> {
  // A call twice in one batch: only its first claim may win (one UPDATE changes a row once).
  const first = new Map<string, number>();
  claims.forEach((c, i) => {
    if (!first.has(claimKey(c))) first.set(claimKey(c), i);
  });
  const distinct = [...first.values()].map((i) => claims[i]!);
  // Locked first, in CALL_ID_ORDER: an UPDATE ... FROM takes its rows in whatever order its join
  // runs. The fences' jobs after them, by id (lockOrder.ts).
  const rows = await db.$queryRaw<
    { call_id: string; crm: string; holds: boolean; claimed: boolean }[]
  >`${PREPARED}
    WITH input AS (
      SELECT * FROM ${unnestRows(
        CLAIM_COLUMNS,
        distinct.map((c) => [c.callId, c.crm, c.now, ...fenceValues(c.fence)]),
        'c',
      )}
    ), locked AS (
      SELECT s.call_id, s.crm FROM sync_status s JOIN input c ON s.call_id = c.call_id AND s.crm = c.crm
      ORDER BY s.${CALL_ID_ORDER}, s.crm FOR UPDATE OF s
    ), c AS (
      SELECT c.*, (c.job IS NULL OR ${heldSql(Prisma.sql`c.job`, Prisma.sql`c.epoch`)}) AS holds
      FROM (SELECT * FROM input ORDER BY job) AS c CROSS JOIN ${after('locked')}
    ), claimed AS (
      UPDATE sync_status s
      SET followups_requested_at = c.claimed_at, followups_settled_at = NULL, updated_at = c.claimed_at,
          followups_claim_job = c.job, followups_claim_epoch = c.epoch
      FROM c JOIN locked USING (call_id, crm)
      WHERE s.call_id = c.call_id AND s.crm = c.crm AND s.followups_requested_at IS NULL AND c.holds
      RETURNING s.call_id, s.crm)
    SELECT c.call_id, c.crm, c.holds, claimed.call_id IS NOT NULL AS claimed
    FROM c LEFT JOIN claimed ON claimed.call_id = c.call_id AND claimed.crm = c.crm`;
  const outcome = new Map(
    rows.map(
      (r) =>
        [
          claimKey({ callId: r.call_id, crm: r.crm }),
          r.claimed ? 'claimed' : r.holds ? 'taken' : 'fenced',
        ] as const,
    ),
  );
  return claims.map((c, i) =>
    first.get(claimKey(c)) === i ? (outcome.get(claimKey(c)) ?? 'taken') : 'taken',
  );
}

const claimKey = (c: { callId: string; crm: string }) => `${c.crm}\u0000${c.callId}`;

/**
 * Records the claimed request's answer: stores its drafts not yet known and settles the claim (an
 * answer with no drafts settles it too), in one statement, so the answer is never half recorded.
 */
export async function saveFollowupAnswer(
  db: Db,
  input: { callId: string; crm: CrmName; drafts: DraftInput[]; now: Date; fence?: Fence | undefined },
): Promise<void> {
  const { callId, crm, now } = input;
  // The drafts are the Service's whoever asked, so they are stored even by a run that lost its
  // lease; only the claim's settling is the run's. New drafts this run will not write get their
  // job in the same statement (draftsJob.ts): the call is written already, or the run lost its lease.
  // In the lock order (lockOrder.ts): the call's row, its drafts, the fence's job, then queued jobs.
  const [row] = await db.$queryRaw<{ holds: boolean }[]>`
    WITH locked AS (${lockCall(callId, crm)}),
    drafts AS (${draftsInsertFrom(draftRowsOf(callId, input.drafts, now, after('locked')))}),
    f AS (SELECT ${fenceHolds(input.fence)} AS holds FROM ${after('drafts')}),
    settled AS (
      UPDATE sync_status SET followups_settled_at = ${now}::timestamptz, updated_at = ${now}::timestamptz
      FROM f WHERE call_id = ${callId} AND crm = ${crm} AND followups_requested_at IS NOT NULL AND f.holds
      RETURNING 1),
    jobs AS (${draftsJobInsert({
      callId,
      now,
      afterCte: 'f',
      when: Prisma.sql`EXISTS (SELECT 1 FROM drafts)
        AND ((SELECT state FROM locked) = 'written_back' OR NOT (SELECT holds FROM f))`,
    })})
    SELECT holds FROM f`;
  if (!row?.holds) throw new LeaseLostError(input.fence, `settling call ${callId}'s follow-up claim`);
}

/**
 * Locks the call's sync_status row (first, in the lock order: lockOrder.ts); its state as the lock
 * found it (a move committed while this waited included).
 */
export const lockCall = (callId: string, crm: CrmName) =>
  Prisma.sql`SELECT state FROM sync_status WHERE call_id = ${callId} AND crm = ${crm} FOR UPDATE`;

/**
 * Records that the claimed request was lost to an ambiguous failure: settles the claim with
 * `warning`. A claim left unsettled means its run stopped between asking and hearing back
 * (settleAbandonedFollowupClaim).
 */
export async function settleFollowupClaim(
  db: Db,
  input: { callId: string; crm: CrmName; now: Date; warning: string; fence?: Fence | undefined },
): Promise<void> {
  const { callId, crm, now, warning } = input;
  const row = await db.syncStatus.findUnique({
    where: { callId_crm: { callId, crm } },
    select: { warnings: true },
  });
  if (!row) return;
  const [f] = await db.$queryRaw<{ holds: boolean }[]>`
    WITH locked AS (${lockCall(callId, crm)}),
    f AS (SELECT ${fenceHolds(input.fence)} AS holds FROM ${after('locked')}),
    settled AS (
      UPDATE sync_status SET followups_settled_at = ${now}::timestamptz, updated_at = ${now}::timestamptz,
                             warnings = ${mergeWarnings(row.warnings, [warning])}::text[]
      FROM f WHERE call_id = ${callId} AND crm = ${crm} AND followups_requested_at IS NOT NULL AND f.holds
      RETURNING 1)
    SELECT holds FROM f`;
  if (!f?.holds) throw new LeaseLostError(input.fence, `settling call ${callId}'s follow-up claim`);
}

/**
 * Settles, with `warning`, a claim whose run stopped mid-request: claimed, never settled, and no
 * drafts here or in the CRM. Only a run holding a newer lease than the claimant's may: the
 * claimant's job no longer runs under the epoch it claimed with (killed, or lost its lease), so it
 * can no longer settle the claim itself, and `fence` (the settler's) still holds. Returns true
 * when this call settled it.
 */
export async function settleAbandonedFollowupClaim(
  db: Db,
  input: {
    callId: string;
    crm: CrmName;
    now: Date;
    warning: (claimedAt: Date) => string;
    fence?: Fence | undefined;
  },
): Promise<boolean> {
  const { callId, crm, now } = input;
  const row = await db.syncStatus.findUnique({
    where: { callId_crm: { callId, crm } },
    select: { warnings: true, followupsRequestedAt: true, followupsSettledAt: true, crmFollowupIds: true },
  });
  const claimedAt = row?.followupsRequestedAt;
  if (!row || !claimedAt || row.followupsSettledAt || row.crmFollowupIds.length > 0) return false;
  if ((await db.callFollowup.count({ where: { callId } })) > 0) return false;
  const [f] = await db.$queryRaw<{ holds: boolean; settled: number }[]>`
    WITH locked AS (${lockCall(callId, crm)}),
    f AS (SELECT ${fenceHolds(input.fence)} AS holds FROM ${after('locked')}),
    settled AS (
      UPDATE sync_status s SET followups_settled_at = ${now}::timestamptz, updated_at = ${now}::timestamptz,
                               warnings = ${mergeWarnings(row.warnings, [input.warning(claimedAt)])}::text[]
      FROM f
      WHERE s.call_id = ${callId} AND s.crm = ${crm} AND s.followups_requested_at = ${claimedAt}::timestamptz
        AND s.followups_settled_at IS NULL AND f.holds
        AND (s.followups_claim_job IS NULL
             OR NOT ${heldSql(Prisma.sql`s.followups_claim_job`, Prisma.sql`s.followups_claim_epoch`)})
      RETURNING 1)
    SELECT holds, (SELECT count(*) FROM settled)::int AS settled FROM f`;
  if (!f?.holds) throw new LeaseLostError(input.fence, `settling call ${callId}'s abandoned follow-up claim`);
  return f.settled === 1;
}

/**
 * Undoes a claim after a request that provably never reached the Service (a 429, a 503, a refused
 * connection), so the next try asks again. Only a claim with no drafts stored is released.
 */
export async function releaseFollowupGeneration(
  db: Db,
  callId: string,
  crm: CrmName,
  now: Date,
  /** The run that claimed: only its own claim is released. */
  fence?: Fence,
): Promise<void> {
  if ((await db.callFollowup.count({ where: { callId } })) > 0) return;
  const [job, epoch] = fenceValues(fence);
  await db.syncStatus.updateMany({
    where: {
      callId,
      crm,
      followupsRequestedAt: { not: null },
      ...(fence && { followupsClaimJob: job, followupsClaimEpoch: epoch }),
    },
    data: {
      followupsRequestedAt: null,
      followupsSettledAt: null,
      followupsClaimJob: null,
      followupsClaimEpoch: null,
      updatedAt: now,
    },
  });
}
