/**
 * The database-backed webhook inbox: stores each delivery once, records the call and queues its
 * work in one statement, and the receiver answers 2xx only after the commit. Group commits and the
 * live lane: docs/reliability.md, "The webhook inbox".
 */
import type { CrmName } from '../crm/types.js';
import type { WebhookInbox, InboxRecord } from '../http/types.js';
import { callFactsOf } from '../pipelines/callFacts.js';
import { jobsForEvent, statesNeedingWork } from '../pipelines/route.js';
import { isLiveJob, type JobSpec } from '../store/jobKinds.js';
import { parseWebhookEvent, type WebhookEvent } from '../service/events.js';
import type { Call } from '../service/types.js';
import { inTransaction, type DatabaseKind, type Db } from '../store/database.js';
import { runAsLive } from '../store/livePriority.js';
import type { DraftInput } from '../store/followupRepo.js';
import { storeRound, type RoundDelivery } from '../store/inboxRound.js';
import { recordRejectedWebhook } from '../store/webhookInboxRepo.js';
import { createGroupCommit } from '../util/groupCommit.js';

/** Most deliveries per transaction: bounds a statement's parameters and a batch's latency. */
const MAX_BATCH = 64;

interface Delivery {
  record: InboxRecord;
  event: WebhookEvent;
  jobs: JobSpec[];
}

type Stored = { duplicate: boolean } | { error: unknown };

/** Two batches at once on PostgreSQL's pool; the embedded database has one connection. */
export function inboxFlushesFor(kind: DatabaseKind): number {
  return kind === 'postgres' ? 2 : 1;
}

export function createDbInbox(deps: {
  db: Db;
  /** The live lane's client (Database.live), for deliveries that queue live work; default `db`. */
  liveDb?: Db | undefined;
  crm: CrmName;
  /** Told after commit which job kinds were enqueued, so idle runners wake at once. */
  onEnqueued?: (kinds: Set<string>) => void;
  /**
   * Batches written at once per group (default 1). On PostgreSQL's pool, 2: the next batch is
   * built while one waits on its commit. A call's deliveries are never in two at once.
   */
  flushesAtOnce?: number;
}): WebhookInbox {
  // An ack is as pressing as a live call's work (the Service times deliveries out, and a
  // call.started waits in it): on the embedded database it goes ahead of bulk work too.
  const commitsVia = (db: Db) =>
    createGroupCommit<Delivery, Stored>((batch) => runAsLive(() => storeBatch(db, deps.crm, batch)), {
      maxBatch: MAX_BATCH,
      maxInFlight: deps.flushesAtOnce ?? 1,
      keyOf: (d) => d.event.data.call_id,
    });
  const commits = { bulk: commitsVia(deps.db), live: commitsVia(deps.liveDb ?? deps.db) };
  return {
    async store(e: InboxRecord) {
      if (e.outcome === 'rejected' || !e.eventId || !e.type) {
        await recordRejectedWebhook(deps.db, {
          rawBody: e.rawBody,
          reason: e.rejectReason ?? 'not an event',
          signatureOk: true,
          receivedAt: new Date(e.receivedAt),
          eventId: e.eventId,
          type: e.type,
          callId: e.callId,
        });
        return { duplicate: false };
      }
      // The receiver hands over the event it validated; a record from elsewhere is parsed here.
      const event = e.event ?? parseWebhookEvent(JSON.parse(e.rawBody));
      const jobs = jobsForEvent(event, e.receivedAt);
      const stored = await commits[jobs.some(isLiveJob) ? 'live' : 'bulk'].submit({ record: e, event, jobs });
      if ('error' in stored) throw stored.error;
      if (!stored.duplicate && jobs.length > 0) deps.onEnqueued?.(new Set(jobs.map((j) => j.kind)));
      return stored;
    },
  };
}

async function storeBatch(db: Db, crm: CrmName, batch: Delivery[]): Promise<Stored[]> {
  try {
    const rounds = roundsOf(batch);
    // One round is one statement, atomic alone; several share a transaction.
    const stored = await (rounds.length === 1
      ? storeInOrder(db, crm, batch, rounds)
      : inTransaction(db, (tx) => storeInOrder(tx, crm, batch, rounds)));
    return stored;
  } catch (error) {
    if (batch.length === 1) return [{ error }];
  }
  const out: Stored[] = [];
  for (const delivery of batch) out.push(...(await storeBatch(db, crm, [delivery])));
  return out;
}

/**
 * Deliveries of the same call go in rounds (its first delivery in the first round, and so on), so
 * each round touches a call once and the calls' events still apply in the order they came.
 */
function roundsOf(batch: Delivery[]): number[][] {
  const rounds: number[][] = [];
  const seen = new Map<string, number>();
  batch.forEach((d, i) => {
    const n = seen.get(d.event.data.call_id) ?? 0;
    seen.set(d.event.data.call_id, n + 1);
    (rounds[n] ??= []).push(i);
  });
  return rounds;
}

async function storeInOrder(db: Db, crm: CrmName, batch: Delivery[], rounds: number[][]): Promise<Stored[]> {
  const out: Stored[] = new Array<Stored>(batch.length);
  for (const round of rounds) {
    const deliveries = round.map((i) => batch[i]!);
    const results = await storeRound(db, crm, deliveries.map(roundDelivery));
    for (const [k, { duplicate }] of results.entries()) out[round[k]!] = { duplicate };
  }
  return out;
}

/** What one delivery stores and queues (src/store/inboxRound.ts applies it). */
function roundDelivery({ record, event, jobs }: Delivery): RoundDelivery {
  if (jobs.length > 1) throw new Error(`${event.type}: an event queues one job at most`);
  const [job] = jobs;
  const call = (event.data.call ?? null) as Call | null;
  const receivedAt = new Date(record.receivedAt);
  // The draft is kept now, not only in the job's payload: while a write-back job of this call
  // runs (or a dead worker's lease holds it) no second job is queued to carry it.
  const draft = draftOf(event);
  return {
    delivery: {
      eventId: event.id,
      type: event.type,
      callId: event.data.call_id,
      rawBody: record.rawBody,
      receivedAt,
      // Routing (this same statement) is the inbox's whole job: stored as processed.
      processedAt: receivedAt,
    },
    call: call ? callFactsOf(call) : undefined,
    draft,
    job: job
      ? {
          spec: {
            kind: job.kind,
            key: job.key,
            payload: job.payload,
            priority: job.priority,
            runAt: new Date(record.receivedAt + (job.delayMs ?? 0)),
            now: receivedAt,
          },
          whileIn: statesNeedingWork(event),
          // A draft stored already needs no job: its generation stored it inside the write-back
          // job that asked for it, which writes every stored draft of the call (on this run or
          // its retry), or queued the drafts job when that run had lost its lease or the call
          // was written already (src/store/draftsJob.ts); an earlier delivery queued a job of its own.
          onlyForNewDraft: event.type === 'followup.generated' && draft !== null,
        }
      : null,
  };
}

/** The follow-up draft an event carries (followup.generated), if any. */
function draftOf(event: WebhookEvent): DraftInput | null {
  return (event.data.followup ?? null) as DraftInput | null;
}
