/**
 * The webhook inbox's single statement for a round of deliveries (distinct calls; see
 * src/worker/inbox.ts): stores each delivery once by event id, records its call, keeps the draft
 * it carries and queues its job. Data-modifying CTEs, each the owning repository's own fragment,
 * pass what they did on through RETURNING. One statement is atomic by itself, so a batch of one
 * round needs no transaction: one round trip per group commit instead of five (BEGIN, three
 * inserts, COMMIT), which is most of an ack's database cost (docs/performance.md).
 */
import type { CrmName } from '../crm/types.js';
import { Prisma } from '../generated/prisma/client.js';
import type { SyncState } from '../sync/states.js';
import type { Db } from './database.js';
import { DRAFT_INPUT_COLUMNS, draftInputRow, draftsInsertFrom, type DraftInput } from './followupRepo.js';
import { JOB_INPUT_COLUMNS, jobInputRow, jobsInsertFrom, type EnqueueInput } from './jobQueue.js';
import {
  DISCOVERED_COLUMNS,
  discoveredEventsFrom,
  discoveredRow,
  discoveredUpsertFrom,
} from './syncStatusRepo.js';
import type { CallFacts } from './syncStatusRepo.js';
import {
  DELIVERY_COLUMNS,
  deliveryRow,
  duplicatesFrom,
  storedFrom,
  type InboxDelivery,
} from './webhookInboxRepo.js';

export interface RoundDelivery {
  delivery: InboxDelivery;
  /** What the delivery says about its call (sync_status facts). */
  call: CallFacts | undefined;
  draft: DraftInput | null;
  job: {
    spec: EnqueueInput;
    /** The call states in which the job is still needed; null: in any. */
    whileIn: readonly SyncState[] | null;
    /** Queued only if `draft` was not stored before (a stored draft has its job already). */
    onlyForNewDraft: boolean;
  } | null;
}

export interface RoundResult {
  duplicate: boolean;
  /** The job queued or joined; null when none was needed (or a duplicate). */
  job: { id: number; created: boolean } | null;
}

const sql = Prisma.sql;

export async function storeRound(
  db: Db,
  crm: CrmName,
  round: readonly RoundDelivery[],
): Promise<RoundResult[]> {
  if (round.length === 0) return [];
  const callIds = new Set(round.map((r) => r.delivery.callId));
  if (callIds.size !== round.length) throw new Error('storeRound: one delivery per call');
  const values = <T>(rows: readonly T[], row: (r: T) => Prisma.Sql) => Prisma.join(rows.map(row));
  const withN = round.map((r, n) => ({ ...r, n }));
  const calls = withN.map(
    ({ n, delivery: d, call }) =>
      sql`(${n}::int, ${discoveredRow(crm, { callId: d.callId!, call, now: d.receivedAt })})`,
  );
  const drafts = withN.filter((r) => r.draft);
  const jobs = withN.filter((r) => r.job);
  if (jobs.some((r) => !r.job!.spec.key)) throw new Error('storeRound: every job needs a key');

  const draftParts = drafts.length
    ? sql`, drafts_in (n, ${DRAFT_INPUT_COLUMNS}) AS (VALUES ${values(
        drafts,
        (r) =>
          sql`(${r.n}::int, ${draftInputRow({ callId: r.delivery.callId!, draft: r.draft!, now: r.delivery.receivedAt })})`,
      )}),
      drafts AS (${draftsInsertFrom(sql`(SELECT * FROM drafts_in WHERE n IN (SELECT n FROM fresh)) AS input`)})`
    : Prisma.empty;
  // A job whose draft must be new: its draft's row is among those inserted now.
  const draftIsNew = drafts.length
    ? sql`EXISTS (SELECT 1 FROM drafts_in x JOIN drafts USING (call_id, draft_id) WHERE x.n = j.n)`
    : sql`false`;
  const jobParts = jobs.length
    ? sql`, jobs_in (n, while_in, only_for_new_draft, ${JOB_INPUT_COLUMNS}) AS (VALUES ${values(
        jobs,
        (r) =>
          sql`(${r.n}::int, ${r.job!.whileIn?.join(',') ?? null}, ${r.job!.onlyForNewDraft}::boolean,
               ${jobInputRow(r.job!.spec)})`,
      )}),
      jobs AS (${jobsInsertFrom(sql`(
        SELECT j.* FROM jobs_in j JOIN calls c USING (n) JOIN up ON up.call_id = c.call_id
        WHERE j.n IN (SELECT n FROM fresh)
          AND (j.while_in IS NULL OR up.state = ANY (string_to_array(j.while_in, ',')))
          AND (NOT j.only_for_new_draft OR ${draftIsNew})
      ) AS input`)})`
    : Prisma.empty;
  const jobResults = jobs.length
    ? sql`UNION ALL SELECT j.n, jobs.id, jobs.created FROM jobs JOIN jobs_in j USING (key)`
    : Prisma.empty;

  const rows = await db.$queryRaw<{ n: number; job_id: bigint | null; created: boolean | null }[]>`
    WITH deliveries (n, ${DELIVERY_COLUMNS}) AS (VALUES ${values(
      withN,
      (r) => sql`(${r.n}::int, ${deliveryRow(r.delivery)})`,
    )}),
    -- In order, so that a repeated event id is stored by its first delivery.
    stored AS (${storedFrom(sql`(SELECT * FROM deliveries ORDER BY n) AS input`)}),
    fresh AS (
      SELECT DISTINCT ON (event_id) n FROM deliveries JOIN stored USING (event_id) ORDER BY event_id, n),
    duplicates AS (${duplicatesFrom(sql`(SELECT * FROM deliveries WHERE n NOT IN (SELECT n FROM fresh)) AS input`)}),
    calls (n, ${DISCOVERED_COLUMNS}) AS (VALUES ${Prisma.join(calls)}),
    up AS (${discoveredUpsertFrom(sql`(SELECT * FROM calls WHERE n IN (SELECT n FROM fresh)) AS input`)}),
    up_events AS (${discoveredEventsFrom(sql`up`)})
    ${draftParts}
    ${jobParts}
    SELECT n, NULL::bigint AS job_id, NULL::boolean AS created FROM fresh
    ${jobResults}`;

  const fresh = new Set<number>();
  const queued = new Map<number, { id: number; created: boolean }>();
  for (const r of rows) {
    if (r.job_id === null) fresh.add(r.n);
    else queued.set(r.n, { id: Number(r.job_id), created: Boolean(r.created) });
  }
  return round.map((_, n) => ({ duplicate: !fresh.has(n), job: queued.get(n) ?? null }));
}
