import type { MatchDecision } from '../crm/types.js';
import type { CrmName } from '../crm/types.js';
import { Prisma, type SyncStatus as SyncStatusRow } from '../generated/prisma/client.js';
import { assertTransition, canTransition, isSyncState, SYNC_STATES, type SyncState } from '../sync/states.js';
import { fenceHolds, fenceValues, heldSql, LeaseLostError, type Fence } from './fence.js';
import { inTransaction, type Db } from './database.js';
import { after, CALL_ID_ORDER } from './lockOrder.js';
import { refusedData } from './refusedData.js';
import { addSyncEvent, clipDetail } from './syncEventRepo.js';
import { columnNames, unnestRows, type Columns } from './unnest.js';

/** One call's sync with one CRM (table sync_status). */
export interface SyncStatusRecord {
  callId: string;
  crm: CrmName;
  state: SyncState;
  /** Failed tries in the current state. */
  attempts: number;
  lastErrorCode: string | null;
  lastErrorMessage: string | null;
  /** Write-backs housekeeping queued since the call last moved (NO_PROGRESS past a few). */
  requeues: number;
  nextAttemptAt: Date | null;
  contextPushedAt: Date | null;
  writtenBackAt: Date | null;
  crmContactId: string | null;
  crmCompanyId: string | null;
  crmDealId: string | null;
  crmActivityId: string | null;
  crmFollowupIds: string[];
  /** When follow-ups were requested from the Service (at most once per call). */
  followupsRequestedAt: Date | null;
  callCreatedAt: Date | null;
  participantEmail: string | null;
  participantCompany: string | null;
  overallScore: number | null;
  callStatus: string | null;
  /** Why these CRM records (null until a lookup ran, or for rows from before it was recorded). */
  matchDecision: MatchDecision | null;
  /** Problems that did not stop the sync, "CODE: message", newest last. */
  warnings: string[];
  createdAt: Date;
  updatedAt: Date;
}

/** What the Service says about the call; kept current on every upsert (null = unknown, kept). */
export interface CallFacts {
  createdAt?: Date | null | undefined;
  participantEmail?: string | null | undefined;
  participantCompany?: string | null | undefined;
  overallScore?: number | null | undefined;
  status?: string | null | undefined;
}

/** Fields a transition may set along with the new state. */
export interface TransitionFields {
  nextAttemptAt?: Date | null;
  contextPushedAt?: Date | null;
  writtenBackAt?: Date | null;
  crmContactId?: string | null;
  crmCompanyId?: string | null;
  crmDealId?: string | null;
  crmActivityId?: string | null;
  crmFollowupIds?: string[];
  matchDecision?: MatchDecision | null;
  warnings?: string[];
}

/** Most warnings kept per call. */
export const MAX_WARNINGS = 20;

/** The call's warnings with `added` appended (each once), the oldest dropped past MAX_WARNINGS. */
export function mergeWarnings(existing: readonly string[], added: readonly string[]): string[] {
  const out = existing.filter((w) => !added.includes(w));
  out.push(...new Set(added));
  return out.slice(-MAX_WARNINGS);
}

export class SyncStatusNotFoundError extends Error {
  readonly code = 'SYNC_STATUS_NOT_FOUND';
  constructor(
    readonly callId: string,
    readonly crm: CrmName,
  ) {
    super(`no sync status for call ${callId} (${crm})`);
    this.name = 'SyncStatusNotFoundError';
  }
}

export function toSyncStatus(row: SyncStatusRow): SyncStatusRecord {
  if (!isSyncState(row.state)) throw new Error(`sync_status ${row.callId}: unknown state "${row.state}"`);
  if (row.crm !== 'hubspot' && row.crm !== 'salesforce') {
    throw new Error(`sync_status ${row.callId}: unknown crm "${row.crm}"`);
  }
  return {
    callId: row.callId,
    crm: row.crm,
    state: row.state,
    attempts: row.attempts,
    lastErrorCode: row.lastErrorCode,
    lastErrorMessage: row.lastErrorMessage,
    requeues: row.requeues,
    nextAttemptAt: row.nextAttemptAt,
    contextPushedAt: row.contextPushedAt,
    writtenBackAt: row.writtenBackAt,
    crmContactId: row.crmContactId,
    crmCompanyId: row.crmCompanyId,
    crmDealId: row.crmDealId,
    crmActivityId: row.crmActivityId,
    crmFollowupIds: [...row.crmFollowupIds],
    followupsRequestedAt: row.followupsRequestedAt,
    callCreatedAt: row.callCreatedAt,
    participantEmail: row.participantEmail,
    participantCompany: row.participantCompany,
    overallScore: row.overallScore,
    callStatus: row.callStatus,
    matchDecision: (row.matchDecision ?? null) as MatchDecision | null,
    warnings: [...(row.warnings ?? [])],
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export async function getSyncStatus(db: Db, callId: string, crm: CrmName): Promise<SyncStatusRecord | null> {
  const row = await db.syncStatus.findUnique({ where: { callId_crm: { callId, crm } } });
  return row ? toSyncStatus(row) : null;
}

/** The rows of many calls in one query, by call id (calls without one are absent). */
export async function getSyncStatuses(
  db: Db,
  callIds: readonly string[],
  crm: CrmName,
): Promise<Map<string, SyncStatusRecord>> {
  if (callIds.length === 0) return new Map();
  const rows = await db.syncStatus.findMany({ where: { crm, callId: { in: [...new Set(callIds)] } } });
  return new Map(rows.map((row) => [row.callId, toSyncStatus(row)]));
}

/**
 * Records a call as discovered, or refreshes the call facts of a known one (its state is kept).
 * `created` says whether this call was new for this CRM.
 */
export async function upsertDiscovered(
  db: Db,
  input: { callId: string; crm: CrmName; call?: CallFacts; now: Date },
): Promise<{ record: SyncStatusRecord; created: boolean }> {
  const [one] = await upsertDiscoveredMany(db, input.crm, [input]);
  return one!;
}

/**
 * upsertDiscovered for many calls (distinct ids) in one statement, which also records each new
 * call's first sync_event: no transaction or read-before-write of its own, so it is one round trip
 * on the hot paths (every job, every webhook). Results in the order of `calls`.
 */
export async function upsertDiscoveredMany(
  db: Db,
  crm: CrmName,
  calls: readonly { callId: string; call?: CallFacts | undefined; now: Date }[],
): Promise<{ record: SyncStatusRecord; created: boolean }[]> {
  if (calls.length === 0) return [];
  const ids = new Set(calls.map((c) => c.callId));
  if (ids.size !== calls.length) throw new Error('upsertDiscoveredMany: call ids must be distinct');
  const rows = await db.$queryRaw<(SyncStatusRaw & { created: boolean })[]>`
    WITH up AS (${discoveredUpsertFrom(
      unnestRows(
        DISCOVERED_COLUMNS,
        calls.map((c) => discoveredValues(crm, c)),
        'input',
      ),
    )}
    ), events AS (${discoveredEventsFrom(Prisma.sql`up`)})
    SELECT * FROM up`;
  const byId = new Map(rows.map((r) => [r.call_id, r]));
  return calls.map(({ callId }) => {
    const row = byId.get(callId);
    if (!row) throw new Error(`sync_status ${callId}: upsert returned no row`);
    return { record: toSyncStatus(fromRaw(row)), created: row.created };
  });
}

/**
 * upsertDiscoveredMany, and when the database refuses its one statement's data (text it cannot
 * hold, say: refusedData), each call alone, so that such a row fails only its own call. Results
 * in the order of `calls`: the row, or that call's error. Any other failure is thrown.
 */
export async function upsertDiscoveredEach(
  db: Db,
  crm: CrmName,
  calls: readonly { callId: string; call?: CallFacts | undefined; now: Date }[],
): Promise<({ record: SyncStatusRecord; created: boolean } | Error)[]> {
  try {
    return await upsertDiscoveredMany(db, crm, calls);
  } catch (error) {
    if (!refusedData(error)) throw error;
    return Promise.all(
      calls.map((c) =>
        upsertDiscoveredMany(db, crm, [c]).then(
          ([one]) => one!,
          (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
        ),
      ),
    );
  }
}

/** The columns of a source of discovered calls (discoveredUpsertFrom), one row each from discoveredValues. */
export const DISCOVERED_COLUMNS: Columns = [
  ['call_id', 'text'],
  ['crm', 'text'],
  ['state', 'text'],
  ['call_created_at', 'timestamptz'],
  ['participant_email', 'text'],
  ['participant_company', 'text'],
  ['overall_score', 'int'],
  ['call_status', 'text'],
  ['created_at', 'timestamptz'],
  ['updated_at', 'timestamptz'],
];

export function discoveredValues(
  crm: CrmName,
  { callId, call, now }: { callId: string; call?: CallFacts | undefined; now: Date },
): unknown[] {
  // Known facts only: a fact left out is null here and keeps the stored value (discoveredUpsertFrom).
  const f = callFactColumns(call ?? {});
  return [
    callId,
    crm,
    'discovered',
    f.callCreatedAt ?? null,
    f.participantEmail ?? null,
    f.participantCompany ?? null,
    f.overallScore ?? null,
    f.callStatus ?? null,
    now,
    now,
  ];
}

/**
 * The statement that records the calls of `source` (DISCOVERED_COLUMNS, distinct call ids) by
 * upsertDiscovered's rule; returns each row and whether it was created. With discoveredEventsFrom,
 * also one part of the webhook inbox's single statement (src/store/inboxRound.ts).
 */
export function discoveredUpsertFrom(source: Prisma.Sql): Prisma.Sql {
  // Rows in CALL_ID_ORDER, whatever order the list page or the round gave them in.
  return Prisma.sql`
    INSERT INTO sync_status AS s (${columnNames(DISCOVERED_COLUMNS)})
    SELECT ${columnNames(DISCOVERED_COLUMNS)} FROM ${source} ORDER BY ${CALL_ID_ORDER}
    ON CONFLICT (call_id, crm) DO UPDATE SET
      call_created_at = COALESCE(EXCLUDED.call_created_at, s.call_created_at),
      participant_email = COALESCE(EXCLUDED.participant_email, s.participant_email),
      participant_company = COALESCE(EXCLUDED.participant_company, s.participant_company),
      overall_score = COALESCE(EXCLUDED.overall_score, s.overall_score),
      call_status = COALESCE(EXCLUDED.call_status, s.call_status),
      -- Touched only when some fact came with it, as an update of nothing would not.
      updated_at = CASE WHEN num_nonnulls(EXCLUDED.call_created_at, EXCLUDED.participant_email,
                          EXCLUDED.participant_company, EXCLUDED.overall_score, EXCLUDED.call_status) > 0
                        THEN EXCLUDED.updated_at ELSE s.updated_at END
    RETURNING s.*, (xmax = 0) AS created`;
}

/** Each new call's first sync_event, from discoveredUpsertFrom's result `upserted`. */
export function discoveredEventsFrom(upserted: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO sync_event (call_id, crm, at, from_state, to_state)
    SELECT call_id, crm, created_at, NULL, 'discovered' FROM ${upserted} WHERE created`;
}

/** A sync_status row as raw SQL returns it. */
interface SyncStatusRaw {
  call_id: string;
  crm: string;
  state: string;
  attempts: number;
  last_error_code: string | null;
  last_error_message: string | null;
  requeues: number;
  next_attempt_at: Date | null;
  context_pushed_at: Date | null;
  written_back_at: Date | null;
  crm_contact_id: string | null;
  crm_company_id: string | null;
  crm_deal_id: string | null;
  crm_activity_id: string | null;
  crm_followup_ids: string[] | null;
  followups_requested_at: Date | null;
  call_created_at: Date | null;
  participant_email: string | null;
  participant_company: string | null;
  overall_score: number | null;
  call_status: string | null;
  match_decision: unknown;
  warnings: string[] | null;
  followups_settled_at: Date | null;
  followups_claim_job?: bigint | null;
  followups_claim_epoch?: bigint | null;
  created_at: Date;
  updated_at: Date;
}

function fromRaw(r: SyncStatusRaw): SyncStatusRow {
  return {
    callId: r.call_id,
    crm: r.crm,
    state: r.state,
    attempts: r.attempts,
    lastErrorCode: r.last_error_code,
    lastErrorMessage: r.last_error_message,
    requeues: r.requeues,
    nextAttemptAt: r.next_attempt_at,
    contextPushedAt: r.context_pushed_at,
    writtenBackAt: r.written_back_at,
    crmContactId: r.crm_contact_id,
    crmCompanyId: r.crm_company_id,
    crmDealId: r.crm_deal_id,
    crmActivityId: r.crm_activity_id,
    crmFollowupIds: r.crm_followup_ids ?? [],
    followupsRequestedAt: r.followups_requested_at,
    callCreatedAt: r.call_created_at,
    participantEmail: r.participant_email,
    participantCompany: r.participant_company,
    overallScore: r.overall_score,
    callStatus: r.call_status,
    matchDecision: (r.match_decision ?? null) as SyncStatusRow['matchDecision'],
    warnings: r.warnings ?? [],
    followupsSettledAt: r.followups_settled_at ?? null,
    followupsClaimJob: r.followups_claim_job ?? null,
    followupsClaimEpoch: r.followups_claim_epoch ?? null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function callFactColumns(call: CallFacts) {
  const out: {
    callCreatedAt?: Date;
    participantEmail?: string;
    participantCompany?: string;
    overallScore?: number;
    callStatus?: string;
  } = {};
  if (call.createdAt) out.callCreatedAt = call.createdAt;
  if (call.participantEmail) out.participantEmail = call.participantEmail.toLowerCase();
  if (call.participantCompany) out.participantCompany = call.participantCompany;
  if (call.overallScore !== undefined && call.overallScore !== null) out.overallScore = call.overallScore;
  if (call.status) out.callStatus = call.status;
  return out;
}

/**
 * Moves a call to `to` if the transition table allows it from its current state (and, when
 * `expectedFrom` is given, only from that state), resetting attempts and the last error; records
 * the move in sync_event. Throws IllegalTransitionError (row unchanged) or SyncStatusNotFoundError.
 */
export async function transitionSyncStatus(
  db: Db,
  input: {
    callId: string;
    crm: CrmName;
    to: SyncState;
    now: Date;
    expectedFrom?: SyncState | undefined;
    detail?: string | undefined;
    set?: TransitionFields | undefined;
    /**
     * A write of another table that belongs with the move (say, the follow-ups written with the
     * activity), run in the same statement whether or not the call moves.
     */
    alongside?: Prisma.Sql | undefined;
    /** The job run moving it: no move once its lease is lost (LeaseLostError). */
    fence?: Fence | undefined;
  },
): Promise<SyncStatusRecord> {
  const { callId, crm, to, now } = input;
  // The states it may move from, so that the check, the update and the history row are one
  // statement (one round trip, no transaction of its own) on every job's path.
  const from = SYNC_STATES.filter(
    (s) => canTransition(s, to) && (input.expectedFrom === undefined || s === input.expectedFrom),
  );
  const set = transitionSet(input.set);
  const rows = await db.$queryRaw<(Partial<SyncStatusRaw> & { from_state: string | null; holds: boolean })[]>`
    WITH cur AS (
      SELECT state FROM sync_status WHERE call_id = ${callId} AND crm = ${crm} FOR UPDATE
    ), f AS (SELECT ${fenceHolds(input.fence)} AS holds FROM ${after('cur')}),
    moved AS (
      UPDATE sync_status s SET ${transitionAssignments(to, now, set)}
      FROM cur, f
      WHERE s.call_id = ${callId} AND s.crm = ${crm} AND f.holds
        AND cur.state IN (${from.length > 0 ? Prisma.join(from) : Prisma.sql`NULL`})
      RETURNING s.*, cur.state AS old_state
    ), history AS (
      INSERT INTO sync_event (call_id, crm, at, from_state, to_state, detail)
      SELECT call_id, crm, ${now}::timestamptz, old_state, ${to}, ${clipDetail(input.detail)} FROM moved
    )${input.alongside ? Prisma.sql`, alongside AS (${input.alongside})` : Prisma.empty}
    SELECT (SELECT state FROM cur) AS from_state, (SELECT holds FROM f) AS holds, moved.*
    FROM (SELECT 1) AS one LEFT JOIN moved ON true`;
  const row = rows[0];
  if (!row || row.from_state === null) throw new SyncStatusNotFoundError(callId, crm);
  if (!row.holds) throw new LeaseLostError(input.fence, `call ${callId}'s move to ${to}`);
  if (row.call_id === undefined || row.call_id === null) {
    if (input.expectedFrom !== undefined && row.from_state !== input.expectedFrom) {
      throw new StaleSyncStateError(callId, input.expectedFrom, row.from_state);
    }
    assertTransition(callId, row.from_state, to);
    throw new Error(`call ${callId}: sync state ${row.from_state} did not move to ${to}`);
  }
  return toSyncStatus(fromRaw(row as SyncStatusRaw));
}

/**
 * transitionSyncStatus to one state, without fields, for several calls in one statement (a
 * write-back batch marking its calls writing_back). One result per call id, in order: whether it
 * moved, or the error transitionSyncStatus would have thrown for it (its row then unchanged).
 */
export async function transitionSyncStatuses(
  db: Db,
  input: {
    callIds: readonly string[];
    crm: CrmName;
    to: SyncState;
    now: Date;
    detail?: string | undefined;
    /** The job run moving each call (same order): no move once its lease is lost (LeaseLostError). */
    fences?: readonly (Fence | undefined)[] | undefined;
  },
): Promise<(true | Error)[]> {
  const { callIds, crm, to, now } = input;
  if (callIds.length === 0) return [];
  const from = SYNC_STATES.filter((s) => canTransition(s, to));
  const [jobs, epochs] = [0, 1].map((k) =>
    callIds.map((_, i) => {
      const v = fenceValues(input.fences?.[i])[k];
      return v === null ? null : String(v);
    }),
  );
  // The lock order (lockOrder.ts): the rows in CALL_ID_ORDER, then their fences' jobs by id.
  const rows = await db.$queryRaw<{ call_id: string; from_state: string; moved: boolean; holds: boolean }[]>`
    WITH cur AS (
      SELECT call_id, state FROM sync_status WHERE crm = ${crm} AND call_id IN (${Prisma.join([...callIds])})
      ORDER BY ${CALL_ID_ORDER} FOR UPDATE
    ), f AS (
      SELECT c.call_id, (c.job IS NULL OR ${heldSql(Prisma.sql`c.job`, Prisma.sql`c.epoch`)}) AS holds
      FROM (SELECT * FROM unnest(${[...callIds]}::text[], ${jobs}::bigint[], ${epochs}::bigint[])
              AS c (call_id, job, epoch) ORDER BY job) AS c
        CROSS JOIN ${after('cur')}
    ), moved AS (
      UPDATE sync_status s SET ${transitionAssignments(to, now, Prisma.empty)}
      FROM cur JOIN f ON f.call_id = cur.call_id
      WHERE s.call_id = cur.call_id AND s.crm = ${crm} AND f.holds
        AND cur.state IN (${from.length > 0 ? Prisma.join(from) : Prisma.sql`NULL`})
      RETURNING s.call_id, cur.state AS old_state
    ), history AS (
      INSERT INTO sync_event (call_id, crm, at, from_state, to_state, detail)
      SELECT call_id, ${crm}, ${now}::timestamptz, old_state, ${to}, ${clipDetail(input.detail)} FROM moved
    )
    SELECT cur.call_id, cur.state AS from_state, moved.call_id IS NOT NULL AS moved, f.holds
    FROM cur JOIN f ON f.call_id = cur.call_id LEFT JOIN moved ON moved.call_id = cur.call_id`;
  const byCall = new Map(rows.map((r) => [r.call_id, r]));
  return callIds.map((callId, i) => {
    const row = byCall.get(callId);
    if (!row) return new SyncStatusNotFoundError(callId, crm);
    if (row.moved) return true;
    if (!row.holds) return new LeaseLostError(input.fences?.[i], `call ${callId}'s move to ${to}`);
    try {
      assertTransition(callId, row.from_state, to);
    } catch (error) {
      return error as Error;
    }
    return new Error(`call ${callId}: sync state ${row.from_state} did not move to ${to}`);
  });
}

/**
 * What every transition sets: the new state, attempts, the last error and the re-queue count reset
 * (a move is progress), and `set`.
 */
function transitionAssignments(to: SyncState, now: Date, set: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`next_attempt_at = NULL, ${set} state = ${to}, attempts = 0, requeues = 0,
    last_error_code = NULL, last_error_message = NULL, updated_at = ${now}::timestamptz`;
}

/** TransitionFields as SQL assignments, each followed by a comma. */
function transitionSet(set: TransitionFields | undefined): Prisma.Sql {
  if (!set) return Prisma.empty;
  const parts: Prisma.Sql[] = [];
  const column = (name: string, value: Prisma.Sql) => parts.push(Prisma.sql`${Prisma.raw(name)} = ${value},`);
  const time = (v: Date | null) => Prisma.sql`${v}::timestamptz`;
  const text = (v: string | null) => Prisma.sql`${v}::text`;
  const list = (v: string[]) =>
    v.length === 0 ? Prisma.sql`'{}'::text[]` : Prisma.sql`ARRAY[${Prisma.join(v)}]::text[]`;
  if (set.nextAttemptAt !== undefined) column('next_attempt_at', time(set.nextAttemptAt));
  if (set.contextPushedAt !== undefined) column('context_pushed_at', time(set.contextPushedAt));
  if (set.writtenBackAt !== undefined) column('written_back_at', time(set.writtenBackAt));
  if (set.crmContactId !== undefined) column('crm_contact_id', text(set.crmContactId));
  if (set.crmCompanyId !== undefined) column('crm_company_id', text(set.crmCompanyId));
  if (set.crmDealId !== undefined) column('crm_deal_id', text(set.crmDealId));
  if (set.crmActivityId !== undefined) column('crm_activity_id', text(set.crmActivityId));
  if (set.crmFollowupIds !== undefined) column('crm_followup_ids', list(set.crmFollowupIds));
  if (set.warnings !== undefined) column('warnings', list(set.warnings));
  // A null decision leaves the recorded one (as Prisma's undefined did).
  if (set.matchDecision) column('match_decision', Prisma.sql`${JSON.stringify(set.matchDecision)}::jsonb`);
  return parts.length > 0 ? Prisma.join(parts, ' ') : Prisma.empty;
}

/** The row's state was not the one the caller expected (another worker moved it first). */
export class StaleSyncStateError extends Error {
  readonly code = 'SYNC_STALE_STATE';
  constructor(
    readonly callId: string,
    readonly expected: SyncState,
    readonly actual: string,
  ) {
    super(`call ${callId}: expected sync state ${expected}, found ${actual}`);
    this.name = 'StaleSyncStateError';
  }
}

/** Longest error message kept; error bodies from CRMs can be whole HTML pages. */
const MAX_ERROR_MESSAGE = 2000;

/**
 * Records a failed try in the current state: attempts + 1, the error, and when to try again
 * (null = no automatic retry). The state is unchanged; the error is added to the history (unless
 * `history` is false).
 */
export async function recordSyncError(
  db: Db,
  input: {
    callId: string;
    crm: CrmName;
    code: string;
    message: string;
    nextAttemptAt: Date | null;
    now: Date;
    /** False when the caller's own history line already says it (a move to failed). */
    history?: boolean;
  },
): Promise<SyncStatusRecord> {
  return inTransaction(db, async (tx) => {
    const state = await lockState(tx, input.callId, input.crm);
    const row = await tx.syncStatus.update({
      where: { callId_crm: { callId: input.callId, crm: input.crm } },
      data: {
        attempts: { increment: 1 },
        lastErrorCode: input.code,
        lastErrorMessage: input.message.slice(0, MAX_ERROR_MESSAGE),
        nextAttemptAt: input.nextAttemptAt,
        updatedAt: input.now,
      },
    });
    if (input.history !== false) {
      await addSyncEvent(tx, {
        callId: input.callId,
        crm: input.crm,
        at: input.now,
        from: state,
        to: state,
        detail: `${input.code}: ${input.message}`,
      });
    }
    return toSyncStatus(row);
  });
}

/** Locks the row for the rest of the transaction and returns its state. */
async function lockState(tx: Db, callId: string, crm: CrmName): Promise<string> {
  const rows = await tx.$queryRaw<{ state: string }[]>`
    SELECT state FROM sync_status WHERE call_id = ${callId} AND crm = ${crm} FOR UPDATE`;
  const state = rows[0]?.state;
  if (state === undefined) throw new SyncStatusNotFoundError(callId, crm);
  return state;
}

/**
 * Calls in `state`, oldest call first. With `dueAt`, only those whose next attempt is due
 * (next_attempt_at null or not after it): the worker's to-do list.
 */
export async function listSyncStatusByState(
  db: Db,
  state: SyncState,
  options: { crm?: CrmName; dueAt?: Date; limit?: number } = {},
): Promise<SyncStatusRecord[]> {
  const rows = await db.syncStatus.findMany({
    where: {
      state,
      ...(options.crm ? { crm: options.crm } : {}),
      ...(options.dueAt ? { OR: [{ nextAttemptAt: null }, { nextAttemptAt: { lte: options.dueAt } }] } : {}),
    },
    orderBy: [{ callCreatedAt: { sort: 'asc', nulls: 'last' } }, { createdAt: 'asc' }],
    take: options.limit ?? 100,
  });
  return rows.map(toSyncStatus);
}

/** Number of calls in each state (every state present, zero when none). */
export async function countSyncStatusByState(
  db: Db,
  options: { crm?: CrmName; since?: Date } = {},
): Promise<Record<SyncState, number>> {
  // `since`: calls that happened since then (created at the Service, else first seen by crm-sync).
  const since = options.since;
  const groups = await db.syncStatus.groupBy({
    by: ['state'],
    where: {
      ...(options.crm ? { crm: options.crm } : {}),
      ...(since
        ? { OR: [{ callCreatedAt: { gte: since } }, { callCreatedAt: null, createdAt: { gte: since } }] }
        : {}),
    },
    _count: { _all: true },
  });
  const counts = Object.fromEntries(SYNC_STATES.map((s) => [s, 0])) as Record<SyncState, number>;
  for (const g of groups) if (isSyncState(g.state)) counts[g.state] = g._count._all;
  return counts;
}

/** Calls that failed, or whose last try failed, most recent first. */
export async function recentSyncFailures(
  db: Db,
  options: { crm?: CrmName; since?: Date; limit?: number } = {},
): Promise<SyncStatusRecord[]> {
  const rows = await db.syncStatus.findMany({
    where: {
      OR: [{ state: 'failed' }, { lastErrorCode: { not: null } }],
      ...(options.crm ? { crm: options.crm } : {}),
      ...(options.since ? { updatedAt: { gte: options.since } } : {}),
    },
    orderBy: { updatedAt: 'desc' },
    take: options.limit ?? 20,
  });
  return rows.map(toSyncStatus);
}
