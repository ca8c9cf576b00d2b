/**
 * The runner's side of fencing (issue 22, defect 2): a run whose lease the heartbeat could not
 * renew stops before its next side effect, and stop() neither hands back a job whose Service
 * request is in flight nor keeps one that has started none. The Service and the CRM are doubles
 * here, so the test decides when each request answers; the database is real.
 */
import { describe, expect, it } from 'vitest';
import type { ActivityWrite, CrmAdapter, FollowupWrite } from '../../src/crm/types.js';
import { createLogger } from '../../src/log/logger.js';
import { loadMappings } from '../../src/mapping/index.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import type { PipelineDeps } from '../../src/pipelines/deps.js';
import { JOB_PRIORITY, writebackJobKey } from '../../src/store/jobKinds.js';
import type { LookupCache } from '../../src/pipelines/lookupCache.js';
import type { FollowupOptions, ServiceClient } from '../../src/service/types.js';
import type { Db } from '../../src/store/database.js';
import { listFollowupDrafts } from '../../src/store/followupRepo.js';
import { enqueueJob } from '../../src/store/jobEnqueue.js';
import { claimJobs, heartbeatJobs } from '../../src/store/jobQueue.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { createJobRunner, DEFAULT_RUNNER_OPTIONS } from '../../src/worker/runner.js';
import { CONFIG_DIR } from '../cli/helpers.js';
import { analysis, call, lookupFor } from '../mapping/helpers.js';
import { DATABASE_KINDS, useMigratedDatabase } from '../store/helpers.js';

const DRAFT = { id: 'd-1', subject: 'Thanks', body: 'Next steps', to: ['dana@northwind.example'] };

/** A promise and its resolve. */
function gate<T = void>() {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

/** Test doubles of the Service and the CRM, and what they were asked. */
function doubles(analysisFor: (callId: string, opts: { signal?: AbortSignal }) => Promise<unknown>) {
  const posted = gate();
  const answer = gate<unknown>();
  const asked = { activities: [] as ActivityWrite[], followups: [] as FollowupWrite[], posts: 0 };
  const service = {
    getAnalysis: analysisFor,
    generateFollowups: (_id: string, _body: unknown, opts: FollowupOptions) =>
      opts.aroundSend!(() => {
        asked.posts++;
        posted.open();
        return answer.promise;
      }),
  } as unknown as ServiceClient;
  const crm = {
    findWritten: () => Promise.resolve(new Map()),
    upsertActivities: (list: ActivityWrite[]) => {
      asked.activities.push(...list);
      return Promise.resolve(
        list.map((a) => ({ key: a.callId, ok: true, id: `act-${a.callId}`, created: true })),
      );
    },
    upsertFollowups: (list: FollowupWrite[]) => {
      asked.followups.push(...list);
      return Promise.resolve(list.map((f) => ({ key: f.key, ok: true, id: `note-${f.key}`, created: true })));
    },
    updateDeals: () => Promise.resolve([]),
    readDeals: () => Promise.resolve(new Map()),
  } as unknown as CrmAdapter;
  const lookups = {
    prefetch: () => Promise.resolve(),
    get: () => Promise.resolve(lookupFor('hubspot')),
  } as unknown as LookupCache;
  return { service, crm, lookups, asked, posted, answer };
}

describe.each(DATABASE_KINDS)('job runs fenced by their lease (%s)', (kind) => {
  const get = useMigratedDatabase(kind);

  function start(db: Db, parts: ReturnType<typeof doubles>, clock: FakeClock, lines: string[]) {
    const logger = createLogger({ level: 'info' }, { write: (l: string) => void lines.push(l) });
    const metrics = createMetrics({ defaultMetrics: false });
    const pipeline: PipelineDeps = {
      db,
      crmName: 'hubspot',
      service: parts.service,
      crm: parts.crm,
      mapping: loadMappings(CONFIG_DIR, 'hubspot'),
      lookups: parts.lookups,
      clock,
      logger,
      metrics,
    };
    const runner = createJobRunner(
      { pipeline, outcome: { db, crm: 'hubspot', workerId: 'w', logger, metrics }, clock, logger },
      { ...DEFAULT_RUNNER_OPTIONS, leaseMs: 30_000, bulkBatchSize: 1, bulkConcurrency: 2 },
    );
    runner.start();
    return runner;
  }

  async function queue(db: Db, callId: string, clock: FakeClock): Promise<number> {
    const { id } = await enqueueJob(db, {
      kind: 'writeback',
      key: writebackJobKey(callId),
      payload: { callId, reason: 'backfill', call: { ...call(), id: callId } },
      priority: JOB_PRIORITY.backfill,
      now: new Date(clock.now() - 1_000),
    });
    return id;
  }

  const jobOf = (db: Db, id: number) => db.job.findUniqueOrThrow({ where: { id: BigInt(id) } });

  it('stops a run whose lease was taken back before its next side effect', async () => {
    const db = get().db.prisma;
    const clock = new FakeClock(Date.now());
    const asked = gate();
    const analysed = gate<unknown>();
    const parts = doubles(() => (asked.open(), analysed.promise));
    const id = await queue(db, 'call-lost', clock);
    const lines: string[] = [];
    const runner = start(db, parts, clock, lines);
    await asked.promise;

    // The lease lapses (a long pause) and another worker claims the job: a newer epoch.
    await heartbeatJobs(db, { ids: [id], workerId: 'w', leaseMs: -1_000, now: new Date(clock.now()) });
    const [stolen] = await claimJobs(db, {
      workerId: 'thief',
      limit: 1,
      leaseMs: 30_000,
      now: new Date(clock.now()),
    });
    expect(stolen?.id).toBe(id);
    // The next heartbeat cannot renew it: the run is told to stop.
    await clock.advance(10_000);
    await expect.poll(() => lines.some((l) => l.includes('job lease lost'))).toBe(true);

    analysed.open(analysis());
    await expect.poll(() => runner.inFlight()).toBe(0);
    // No CRM write, no move: the thief's run owns the call now, and the job is untouched.
    expect(parts.asked.activities).toEqual([]);
    expect(
      (await db.syncStatus.findUnique({ where: { callId_crm: { callId: 'call-lost', crm: 'hubspot' } } }))
        ?.state,
    ).not.toBe('writing_back');
    expect(await jobOf(db, id)).toMatchObject({
      state: 'running',
      lockedBy: 'thief',
      epoch: BigInt(stolen!.epoch),
    });

    const stopped = runner.stop(1_000);
    await clock.advance(1_000);
    await stopped;
  });

  it('stop() waits for a request in flight, leaves its job to its lease and hands back the rest', async () => {
    const db = get().db.prisma;
    const clock = new FakeClock(Date.now());
    const idleAsked = gate();
    // call-idle's analysis never comes unless its run is told to stop (as the real client's read).
    const parts = doubles((callId, opts) => {
      if (callId === 'call-posting') return Promise.resolve(analysis());
      idleAsked.open();
      return new Promise((_, reject) =>
        opts.signal?.addEventListener('abort', () => reject(opts.signal!.reason)),
      );
    });
    const posting = await queue(db, 'call-posting', clock);
    const idle = await queue(db, 'call-idle', clock);
    const runner = start(db, parts, clock, []);
    await Promise.all([parts.posted.promise, idleAsked.promise]);

    const stopped = runner.stop(20_000);
    // The run that started no side effect goes back at once, its try not counted.
    await expect.poll(async () => (await jobOf(db, idle)).state).toBe('queued');
    expect(await jobOf(db, idle)).toMatchObject({ attempts: 0, lockedBy: null });
    // The drain bound passes with POST /followups still out: that job is not handed back.
    await clock.advance(20_000);
    await stopped;
    expect(await jobOf(db, posting)).toMatchObject({ state: 'running', lockedBy: 'w' });

    // Heard back: the answer is recorded under the lease, and the run stops before the next CRM
    // write; its job goes back, so the next run writes the drafts.
    parts.answer.open([DRAFT]);
    await expect.poll(async () => (await jobOf(db, posting)).state).toBe('queued');
    expect((await listFollowupDrafts(db, 'call-posting')).map((d) => [d.draftId, d.crmId])).toEqual([
      ['d-1', null],
    ]);
    const row = await db.syncStatus.findUniqueOrThrow({
      where: { callId_crm: { callId: 'call-posting', crm: 'hubspot' } },
    });
    expect(row.followupsSettledAt).not.toBeNull();
    expect(parts.asked.followups).toEqual([]);
    expect(parts.asked.posts).toBe(1);
  });
});
