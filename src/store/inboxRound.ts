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
import { after, JOB_KEY_ORDER } from './lockOrder.js';
import {
  DRAFT_COLUMNS,
  draftsInsertFrom,
  draftsSource,
  draftValues,
  type DraftInput,
} from './followupRepo.js';
import { JOB_COLUMNS, jobsInsertFrom, jobValues, type EnqueueInput } from './jobEnqueue.js';
import {
  DISCOVERED_COLUMNS,
  discoveredEventsFrom,
  discoveredUpsertFrom,
  discoveredValues,
  type CallFacts,
} from './syncStatus/discovered.js';
import { PREPARED, unnestRows, type Columns } from './unnest.js';
import {
  DELIVERY_COLUMNS,
  deliveryValues,
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
const N: Columns = [['n', 'int']];
const JOB_RULES: Columns = [
  ['while_in', 'text'],
  ['only_for_new_draft', 'boolean'],
];

export async function storeRound(
  db: Db,
  crm: CrmName,
  round: readonly RoundDelivery[],
): Promise<RoundResult[]> {
  if (round.length === 0) return [];
  const callIds = new Set(round.map((r) => r.delivery.callId));
  if (callIds.size !== round.length) throw new Error('storeRound: one delivery per call');
  const withN = round.map((r, n) => ({ ...r, n }));
  const drafts = withN.filter((r) => r.draft);
  const jobs = withN.filter((r) => r.job);
  const keys = new Set(jobs.map((r) => r.job!.spec.key));
  if (keys.has(undefined) || keys.has(null) || keys.size !== jobs.length)
    throw new Error('storeRound: every job needs a key of its own');

  const deliveries = unnestRows(
    [...N, ...DELIVERY_COLUMNS],
    withN.map((r) => [r.n, ...deliveryValues(r.delivery)]),
    'd',
  );
  const calls = unnestRows(
    [...N, ...DISCOVERED_COLUMNS],
    withN.map(({ n, delivery: d, call }) => [
      n,
      ...discoveredValues(crm, { callId: d.callId!, call, now: d.receivedAt }),
    ]),
    'c',
  );
  const draftRows = unnestRows(
    [...N, ...DRAFT_COLUMNS],
    drafts.map((r) => [
      r.n,
      ...draftValues({ callId: r.delivery.callId!, draft: r.draft!, now: r.delivery.receivedAt }),
    ]),
    'x',
  );
  const jobRows = unnestRows(
    [...N, ...JOB_RULES, ...JOB_COLUMNS],
    jobs.map((r) => [
      r.n,
      r.job!.whileIn?.join(',') ?? null,
      r.job!.onlyForNewDraft,
      ...jobValues(r.job!.spec),
    ]),
    'j',
  );

  // The text is the same for every round (rows go as arrays), so it stays prepared.
  const rows = await db.$queryRaw<{ n: number; job_id: bigint | null; created: boolean | null }[]>`${PREPARED}
    WITH deliveries AS (SELECT * FROM ${deliveries}),
    -- A repeated event id is offered once, by its first delivery; the rest are duplicates.
    stored AS (${storedFrom(sql`(SELECT DISTINCT ON (event_id) * FROM deliveries ORDER BY event_id, n) AS input`)}),
    fresh AS (
      SELECT DISTINCT ON (event_id) n FROM deliveries JOIN stored USING (event_id) ORDER BY event_id, n),
    duplicates AS (${duplicatesFrom(sql`(SELECT * FROM deliveries WHERE n NOT IN (SELECT n FROM fresh)) AS input`)}),
    calls AS (SELECT * FROM ${calls}),
    up AS (${discoveredUpsertFrom(sql`(SELECT * FROM calls WHERE n IN (SELECT n FROM fresh)) AS input`)}),
    up_events AS (${discoveredEventsFrom(sql`up`)}),
    drafts_in AS (SELECT * FROM ${draftRows}),
    -- The lock order (lockOrder.ts): the calls' rows (up, in CALL_ID_ORDER), their drafts, then jobs (by key).
    drafts AS (${draftsInsertFrom(draftsSource(sql`drafts_in d CROSS JOIN ${after('up')} WHERE n IN (SELECT n FROM fresh)`))}),
    jobs_in AS (SELECT * FROM ${jobRows}),
    jobs AS (${jobsInsertFrom(sql`(
      SELECT j.* FROM jobs_in j JOIN calls c USING (n) JOIN up ON up.call_id = c.call_id CROSS JOIN ${after('drafts')}
      WHERE j.n IN (SELECT n FROM fresh)
        AND (j.while_in IS NULL OR up.state = ANY (string_to_array(j.while_in, ',')))
        -- A job whose draft must be new: its draft's row is among those inserted now.
        AND (NOT j.only_for_new_draft
             OR EXISTS (SELECT 1 FROM drafts_in x JOIN drafts USING (call_id, draft_id) WHERE x.n = j.n))
      ORDER BY j.${JOB_KEY_ORDER}
    ) AS input`)})
    SELECT n, NULL::bigint AS job_id, NULL::boolean AS created FROM fresh
    UNION ALL SELECT j.n, jobs.id, jobs.created FROM jobs JOIN jobs_in j USING (key)`;

  const fresh = new Set<number>();
  const queued = new Map<number, { id: number; created: boolean }>();
  for (const r of rows) {
    if (r.job_id === null) fresh.add(r.n);
    else queued.set(r.n, { id: Number(r.job_id), created: Boolean(r.created) });
  }
  return round.map((_, n) => ({ duplicate: !fresh.has(n), job: queued.get(n) ?? null }));
}
