/**
 * A call's state moves: one statement each that checks the transition table (src/sync/states.ts),
 * the job run's fence (src/store/fence.ts) and records the move in sync_event.
 */
import type { MatchDecision } from '../../crm/types.js';
import type { CrmName } from '../../crm/types.js';
import { Prisma } from '../../generated/prisma/client.js';
import { assertTransition, canTransition, SYNC_STATES, type SyncState } from '../../sync/states.js';
import type { Db } from '../database.js';
import { fenceHolds, fenceValues, heldSql, LeaseLostError, type Fence } from '../fence.js';
import { after, CALL_ID_ORDER } from '../lockOrder.js';
import { clipDetail } from '../syncEventRepo.js';
import {
  fromRaw,
  SyncStatusNotFoundError,
  toSyncStatus,
  type SyncStatusRaw,
  type SyncStatusRecord,
} from './row.js';

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
