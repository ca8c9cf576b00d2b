/**
 * Walks GET /v1/calls from a saved cursor and makes sure every call has its work queued: the
 * safety net under the webhooks (lost deliveries, downtime) and the engine of backfills. A page's
 * calls and jobs are written in short transactions, the last of them with the cursor, so the
 * cursor never moves past a call whose work is not durably queued.
 */
import type { Priority } from '../budget/types.js';
import type { CrmName } from '../crm/types.js';
import { callFactsOf } from '../pipelines/callFacts.js';
import { jobsForDiscoveredCall } from '../pipelines/route.js';
import type { Call, ListCallsParams, ServiceClient } from '../service/types.js';
import { getCursor, saveCursor } from '../store/cursorRepo.js';
import { inTransaction, type Db } from '../store/database.js';
import { enqueueJobs } from '../store/jobEnqueue.js';
import { upsertDiscoveredMany } from '../store/syncStatus/discovered.js';
import type { Clock } from '../util/clock.js';

/**
 * Calls written per transaction. The embedded database runs on this thread: a whole page of 100
 * in one transaction held the event loop (webhook acks, live context pushes) for 0.8-1.5 s here;
 * ten at a time, with a turn of the event loop between, hold it about 50 ms.
 */
const CALLS_PER_TRANSACTION = 10;

export interface DiscoverDeps {
  db: Db;
  crm: CrmName;
  service: ServiceClient;
  clock: Clock;
}

export interface DiscoverOptions {
  cursorName: string;
  reason: 'poll' | 'backfill';
  /** Used only when no cursor is saved yet. */
  start?: Pick<ListCallsParams, 'createdAfter' | 'createdBefore'>;
  priority: Priority;
  maxPages?: number;
  pageSize?: number;
  signal?: AbortSignal;
  onPage?: (progress: { pages: number; calls: number; enqueued: number; lastCall: Call | undefined }) => void;
}

export interface DiscoverResult {
  pages: number;
  calls: number;
  enqueued: number;
  /** True when the walk reached the newest call (has_more false). */
  caughtUp: boolean;
}

export async function discoverCalls(deps: DiscoverDeps, options: DiscoverOptions): Promise<DiscoverResult> {
  const saved = await getCursor(deps.db, options.cursorName);
  const params: ListCallsParams = saved?.cursor
    ? { cursor: saved.cursor, limit: options.pageSize ?? 100 }
    : { ...options.start, limit: options.pageSize ?? 100 };
  const result: DiscoverResult = { pages: 0, calls: 0, enqueued: 0, caughtUp: false };
  for await (const page of deps.service.listCalls(params, {
    priority: options.priority,
    signal: options.signal,
  })) {
    const now = new Date(deps.clock.now());
    let enqueued = 0;
    // The cursor moves with the last chunk only, so it never passes a call whose work is not
    // durably queued; a walk repeated after a crash repeats idempotent writes.
    for (let i = 0; i === 0 || i < page.calls.length; i += CALLS_PER_TRANSACTION) {
      const calls = page.calls.slice(i, i + CALLS_PER_TRANSACTION);
      const lastChunk = i + CALLS_PER_TRANSACTION >= page.calls.length;
      enqueued += await inTransaction(deps.db, async (tx) => {
        const count = await queueCallsWork(tx, deps, calls, options.reason, now);
        if (!lastChunk) return count;
        const last = page.calls.at(-1);
        // Keep the old cursor when a page came back empty without one (nothing new yet).
        const cursor = page.nextCursor ?? saved?.cursor ?? null;
        await saveCursor(tx, {
          name: options.cursorName,
          cursor,
          lastCallCreatedAt: last ? new Date(last.created_at) : undefined,
          now,
        });
        return count;
      });
      await new Promise((resolve) => setImmediate(resolve));
    }
    result.pages++;
    result.calls += page.calls.length;
    result.enqueued += enqueued;
    options.onPage?.({ ...result, lastCall: page.calls.at(-1) });
    if (!page.hasMore) result.caughtUp = true;
    if (options.maxPages !== undefined && result.pages >= options.maxPages) break;
  }
  return result;
}

/** The states whose calls a discovery (poll or backfill) queues work for; a call in any other is done. */
export const STILL_TO_SYNC = ['discovered', 'context_pushed', 'awaiting_analysis', 'writing_back'] as const;

/**
 * Records listed calls and queues the work they need, in one statement for the calls and one for
 * the jobs; returns the jobs created. The calls' rows are locked in call id order (CALL_ID_ORDER)
 * whatever the list's order, and each call's jobs only while its row is held.
 */
export async function queueCallsWork(
  tx: Db,
  deps: DiscoverDeps,
  listed: Call[],
  reason: DiscoverOptions['reason'],
  now: Date,
): Promise<number> {
  // One row per call, should a page ever list one twice (its later copy wins).
  const calls = [...new Map(listed.map((c) => [c.id, c])).values()];
  const records = await upsertDiscoveredMany(
    tx,
    deps.crm,
    calls.map((call) => ({ callId: call.id, call: callFactsOf(call), now })),
  );
  const specs = calls.flatMap((call, i) => {
    const { record } = records[i]!;
    if (!(STILL_TO_SYNC as readonly string[]).includes(record.state)) return [];
    return jobsForDiscoveredCall(call, reason).filter(
      (job) => !(job.kind === 'context' && (record.contextPushedAt || record.state !== 'discovered')),
    );
  });
  const queued = await enqueueJobs(
    tx,
    specs.map((job) => ({
      kind: job.kind,
      key: job.key,
      payload: job.payload,
      priority: job.priority,
      runAt: new Date(now.getTime() + (job.delayMs ?? 0)),
      now,
    })),
  );
  return queued.filter((q) => q.created).length;
}
