/**
 * Recording discovered calls: the upsert that creates a call's row (with its first sync_event) or
 * refreshes its call facts. Its fragments are also part of the webhook inbox's single statement
 * (src/store/inboxRound.ts).
 */
import type { CrmName } from '../../crm/types.js';
import { Prisma } from '../../generated/prisma/client.js';
import { CALL_ID_ORDER } from '../lockOrder.js';
import type { Db } from '../database.js';
import { refusedData } from '../refusedData.js';
import { columnNames, unnestRows, type Columns } from '../unnest.js';
import { fromRaw, toSyncStatus, type SyncStatusRaw, type SyncStatusRecord } from './row.js';

/** What the Service says about the call; kept current on every upsert (null = unknown, kept). */
export interface CallFacts {
  createdAt?: Date | null | undefined;
  participantEmail?: string | null | undefined;
  participantCompany?: string | null | undefined;
  overallScore?: number | null | undefined;
  status?: string | null | undefined;
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
