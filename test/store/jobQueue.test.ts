import pg from 'pg';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  countJobs,
  getJob,
  listFailedJobs,
  pruneDoneJobs,
  replayFailedJobs,
} from '../../src/store/jobAdmin.js';
import { JOB_BACKOFF, jobRetryDelayMs } from '../../src/store/jobBackoff.js';
import { enqueueJob } from '../../src/store/jobEnqueue.js';
import {
  claimJobs as claimOnDbTime,
  completeJob,
  failJob,
  heartbeatJobs as heartbeatOnDbTime,
  requeueExpiredJobs as requeueOnDbTime,
  rescheduleJob,
  type ClaimInput,
} from '../../src/store/jobQueue.js';
import { JOB_PRIORITY } from '../../src/store/jobRecord.js';
import type { Db } from '../../src/store/database.js';
import { dbClockOf } from '../../src/store/dbClock.js';
import { DATABASE_KINDS, useMigratedDatabase } from './helpers.js';

const T0 = new Date('2026-03-02T10:00:00.000Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);
const LEASE = 30_000;

// Leases run on the database's clock: in these tests it reads the `now` each call is given.
const claimJobs = (db: Db, input: ClaimInput) =>
  claimOnDbTime(db, { ...input, dbClock: dbClockOf(input.now) });
const requeueExpiredJobs = (db: Db, now: Date) => requeueOnDbTime(db, now, dbClockOf(now));
const heartbeatJobs = (db: Db, input: Parameters<typeof heartbeatOnDbTime>[1]) =>
  heartbeatOnDbTime(db, { ...input, dbClock: dbClockOf(input.now) });

describe('job retry backoff', () => {
  it('doubles from 5 s with equal jitter, capped at 15 min, never under 1 s', () => {
    expect(jobRetryDelayMs(1, () => 0)).toBe(2_500);
    expect(jobRetryDelayMs(1, () => 0.999999)).toBe(5_000);
    expect(jobRetryDelayMs(3, () => 0)).toBe(10_000);
    expect(jobRetryDelayMs(3, () => 0.5)).toBe(15_000);
    expect(jobRetryDelayMs(40, () => 0.999999)).toBe(JOB_BACKOFF.ceilingMs);
    expect(jobRetryDelayMs(40, () => 0)).toBe(JOB_BACKOFF.ceilingMs / 2);
    expect(jobRetryDelayMs(0, () => 0)).toBeGreaterThanOrEqual(JOB_BACKOFF.floorMs);
  });
});

/**
 * A job of `key` claimed by w1 (at 1 s), and one of the same key queued behind it, due at `runAt`:
 * e.g. call.completed's safety check, delivered late while the call's write-back runs.
 */
async function runningWithOneBehind(prisma: Db, key: string, runAt: Date) {
  const first = await enqueueJob(prisma, { kind: 'k', key, priority: 1, now: at(0) });
  const [claimed] = await claimJobs(prisma, {
    workerId: 'w1',
    limit: 5,
    kinds: ['k'],
    leaseMs: LEASE,
    now: at(1),
  });
  expect(claimed?.id).toBe(first.id);
  const behind = await enqueueJob(prisma, { kind: 'k', key, priority: 1, runAt, now: at(2) });
  return { first, behind };
}

describe.each(DATABASE_KINDS)('JobQueue on %s', (kind) => {
  const get = useMigratedDatabase(kind);
  beforeEach(async () => {
    await get().db.prisma.job.deleteMany();
  });

  it('dedupes on the key among queued jobs, and queues behind a running one', async () => {
    const { prisma } = get().db;
    const a = await enqueueJob(prisma, {
      kind: 'sync',
      key: 'sync:call_1',
      priority: JOB_PRIORITY.backfill,
      runAt: at(60),
      now: at(0),
    });
    const b = await enqueueJob(prisma, {
      kind: 'sync',
      key: 'sync:call_1',
      priority: JOB_PRIORITY.live,
      now: at(1),
    });
    expect(a.created).toBe(true);
    expect(b).toEqual({ id: a.id, created: false });
    expect(await getJob(prisma, a.id)).toMatchObject({
      priority: JOB_PRIORITY.live,
      runAt: at(1),
      state: 'queued',
    });

    // Running: work that arrives now is queued behind it, not dropped, and waits for it.
    const [claimed] = await claimJobs(prisma, { workerId: 'w1', limit: 1, leaseMs: LEASE, now: at(2) });
    expect(claimed?.id).toBe(a.id);
    const c = await enqueueJob(prisma, { kind: 'sync', key: 'sync:call_1', priority: 1, now: at(3) });
    expect(c.created).toBe(true);
    expect(c.id).not.toBe(a.id);
    expect(await enqueueJob(prisma, { kind: 'sync', key: 'sync:call_1', priority: 1, now: at(3) })).toEqual({
      id: c.id,
      created: false,
    });
    expect(await claimJobs(prisma, { workerId: 'w2', limit: 5, leaseMs: LEASE, now: at(4) })).toEqual([]);
    expect(await completeJob(prisma, { id: a.id, workerId: 'w1', now: at(5) })).toBe(true);
    const [next] = await claimJobs(prisma, { workerId: 'w2', limit: 5, leaseMs: LEASE, now: at(6) });
    expect(next?.id).toBe(c.id);
  });

  it('a delayed job queued behind a running one is due as soon as that one is done', async () => {
    const { prisma } = get().db;
    const other = await enqueueJob(prisma, {
      kind: 'k',
      key: 'k:2',
      priority: 1,
      runAt: at(300),
      now: at(0),
    });
    const { first, behind } = await runningWithOneBehind(prisma, 'k:1', at(302));
    expect(await completeJob(prisma, { id: first.id, workerId: 'w1', now: at(5) })).toBe(true);
    expect((await getJob(prisma, behind.id))?.runAt).toEqual(at(5));
    // A job of another key keeps its time.
    expect((await getJob(prisma, other.id))?.runAt).toEqual(at(300));
    const [next] = await claimJobs(prisma, { workerId: 'w2', limit: 5, leaseMs: LEASE, now: at(6) });
    expect(next?.id).toBe(behind.id);
  });

  it.runIf(kind === 'postgres')(
    'completing never waits for a queued job another transaction holds (it keeps its time)',
    async () => {
      const { db, target } = get();
      const { prisma } = db;
      const { first, behind } = await runningWithOneBehind(prisma, 'lk:1', at(300));
      // As the inbox's ON CONFLICT update does, in its own order: waiting on it could deadlock.
      const holder = new pg.Client({ connectionString: target.url });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT id FROM job WHERE id = $1 FOR UPDATE', [behind.id]);
        expect(await completeJob(prisma, { id: first.id, workerId: 'w1', now: at(5) })).toBe(true);
        await holder.query('COMMIT');
      } finally {
        await holder.end();
      }
      expect((await getJob(prisma, behind.id))?.runAt).toEqual(at(300));
    },
  );

  it('a job going back to the queue yields to one queued behind it (reschedule, retry, lease expiry)', async () => {
    const { prisma } = get().db;
    for (const [n, putBack] of [
      [1, (id: number) => rescheduleJob(prisma, { id, workerId: 'w1', runAt: at(500), now: at(12) })],
      [
        2,
        (id: number) =>
          failJob(prisma, {
            job: { id, attempts: 1, maxAttempts: 8 },
            workerId: 'w1',
            error: 'x',
            now: at(12),
          }),
      ],
      [3, () => requeueExpiredJobs(prisma, at(10 + LEASE / 1000 + 1))],
    ] as const) {
      const key = `sup:${n}`;
      const first = await enqueueJob(prisma, {
        kind: 'k',
        key,
        priority: JOB_PRIORITY.writeback,
        now: at(10),
      });
      const [claimed] = await claimJobs(prisma, {
        workerId: 'w1',
        limit: 1,
        kinds: ['k'],
        leaseMs: LEASE,
        now: at(10),
      });
      expect(claimed?.id).toBe(first.id);
      const second = await enqueueJob(prisma, {
        kind: 'k',
        key,
        priority: JOB_PRIORITY.backfill,
        runAt: at(900),
        now: at(11),
      });
      expect(second.created).toBe(true);
      await putBack(first.id);
      const rows = await prisma.job.findMany({ where: { key }, orderBy: { id: 'asc' } });
      expect(rows.map((r) => r.state)).toEqual(['done', 'queued']);
      expect(rows[1]?.priority).toBe(JOB_PRIORITY.writeback);
      expect(rows[1]!.runAt.getTime()).toBeLessThan(at(900).getTime());
    }
  });

  it('claims due jobs by priority then run_at, each once, with a lease', async () => {
    const { prisma } = get().db;
    const backfill = await enqueueJob(prisma, { kind: 'k', priority: JOB_PRIORITY.backfill, now: at(0) });
    const writeOld = await enqueueJob(prisma, {
      kind: 'k',
      priority: JOB_PRIORITY.writeback,
      runAt: at(0),
      now: at(0),
    });
    const writeNew = await enqueueJob(prisma, {
      kind: 'k',
      priority: JOB_PRIORITY.writeback,
      runAt: at(1),
      now: at(0),
    });
    const live = await enqueueJob(prisma, {
      kind: 'k',
      priority: JOB_PRIORITY.live,
      payload: { callId: 'x' },
      runAt: at(2),
      now: at(0),
    });
    await enqueueJob(prisma, { kind: 'k', priority: JOB_PRIORITY.live, runAt: at(99), now: at(0) }); // not due

    const first = await claimJobs(prisma, { workerId: 'w1', limit: 3, leaseMs: LEASE, now: at(10) });
    expect(first.map((j) => j.id)).toEqual([live.id, writeOld.id, writeNew.id]);
    expect(first[0]).toMatchObject({
      state: 'running',
      attempts: 1,
      lockedBy: 'w1',
      lockedUntil: new Date(at(10).getTime() + LEASE),
      payload: { callId: 'x' },
    });
    const second = await claimJobs(prisma, { workerId: 'w2', limit: 10, leaseMs: LEASE, now: at(10) });
    expect(second.map((j) => j.id)).toEqual([backfill.id]);
    expect(await claimJobs(prisma, { workerId: 'w3', limit: 10, leaseMs: LEASE, now: at(10) })).toEqual([]);
  });

  it('filters by kind', async () => {
    const { prisma } = get().db;
    await enqueueJob(prisma, { kind: 'a', priority: 1, now: at(0) });
    const b = await enqueueJob(prisma, { kind: 'b', priority: 1, now: at(0) });
    const got = await claimJobs(prisma, {
      workerId: 'w',
      limit: 5,
      leaseMs: LEASE,
      now: at(1),
      kinds: ['b'],
    });
    expect(got.map((j) => j.id)).toEqual([b.id]);
  });

  it('takes back an expired lease; the late worker learns it lost the job', async () => {
    const { prisma } = get().db;
    const job = await enqueueJob(prisma, { kind: 'k', priority: 1, now: at(0) });
    await claimJobs(prisma, { workerId: 'dead', limit: 1, leaseMs: LEASE, now: at(0) });
    expect(await claimJobs(prisma, { workerId: 'w2', limit: 1, leaseMs: LEASE, now: at(29) })).toEqual([]);
    // A heartbeat keeps it...
    expect(
      await heartbeatJobs(prisma, { ids: [job.id], workerId: 'dead', leaseMs: LEASE, now: at(20) }),
    ).toEqual([job.id]);
    expect(await claimJobs(prisma, { workerId: 'w2', limit: 1, leaseMs: LEASE, now: at(45) })).toEqual([]);
    // ...until they stop.
    const [taken] = await claimJobs(prisma, { workerId: 'w2', limit: 1, leaseMs: LEASE, now: at(51) });
    expect(taken).toMatchObject({ id: job.id, lockedBy: 'w2', attempts: 2 });
    expect(taken?.lastError).toMatch(/lease expired: worker dead/);
    expect(await completeJob(prisma, { id: job.id, workerId: 'dead', now: at(52) })).toBe(false);
    expect(
      await heartbeatJobs(prisma, { ids: [job.id], workerId: 'dead', leaseMs: LEASE, now: at(52) }),
    ).toEqual([]);
    expect(await completeJob(prisma, { id: job.id, workerId: 'w2', now: at(53) })).toBe(true);
  });

  it('fails an expired job whose attempts are spent instead of running it again', async () => {
    const { prisma } = get().db;
    const job = await enqueueJob(prisma, { kind: 'k', priority: 1, maxAttempts: 1, now: at(0) });
    await claimJobs(prisma, { workerId: 'crashy', limit: 1, leaseMs: LEASE, now: at(0) });
    expect(await requeueExpiredJobs(prisma, at(31))).toMatchObject({ requeued: 0, failed: 1 });
    expect((await getJob(prisma, job.id))?.state).toBe('failed');
  });

  it('retries a failed try after the backoff, then fails it for good after max attempts', async () => {
    const { prisma } = get().db;
    const { id } = await enqueueJob(prisma, { kind: 'k', priority: 1, maxAttempts: 2, now: at(0) });
    const [try1] = await claimJobs(prisma, { workerId: 'w', limit: 1, leaseMs: LEASE, now: at(0) });
    expect(
      await failJob(prisma, { job: try1!, workerId: 'w', error: 'HTTP 503', now: at(1), random: () => 0 }),
    ).toBe('retrying');
    expect(await getJob(prisma, id)).toMatchObject({
      state: 'queued',
      runAt: new Date(at(1).getTime() + 2_500),
      lastError: 'HTTP 503',
    });
    expect(await claimJobs(prisma, { workerId: 'w', limit: 1, leaseMs: LEASE, now: at(3) })).toEqual([]);
    const [try2] = await claimJobs(prisma, { workerId: 'w', limit: 1, leaseMs: LEASE, now: at(4) });
    expect(await failJob(prisma, { job: try2!, workerId: 'w', error: 'HTTP 503 again', now: at(5) })).toBe(
      'failed',
    );
    expect(await failJob(prisma, { job: try2!, workerId: 'w', error: 'late', now: at(6) })).toBe('lost');
    expect((await listFailedJobs(prisma)).map((j) => j.id)).toEqual([id]);
  });

  it('fails a non-retryable error at once, and waits a given delay instead of the backoff', async () => {
    const { prisma } = get().db;
    const a = await enqueueJob(prisma, { kind: 'k', priority: 2, now: at(0) });
    const b = await enqueueJob(prisma, { kind: 'k', priority: 1, now: at(0) });
    const [ja, jb] = await claimJobs(prisma, { workerId: 'w', limit: 2, leaseMs: LEASE, now: at(0) });
    expect(
      await failJob(prisma, { job: ja!, workerId: 'w', error: '400', retryable: false, now: at(1) }),
    ).toBe('failed');
    expect(
      await failJob(prisma, { job: jb!, workerId: 'w', error: '429', delayMs: 42_000, now: at(1) }),
    ).toBe('retrying');
    expect((await getJob(prisma, a.id))?.state).toBe('failed');
    expect((await getJob(prisma, b.id))?.runAt).toEqual(at(43));
  });

  it('reschedules without counting the try', async () => {
    const { prisma } = get().db;
    const { id } = await enqueueJob(prisma, { kind: 'k', priority: 1, now: at(0) });
    await claimJobs(prisma, { workerId: 'w', limit: 1, leaseMs: LEASE, now: at(0) });
    expect(await rescheduleJob(prisma, { id, workerId: 'w', runAt: at(100), now: at(1) })).toBe(true);
    expect(await getJob(prisma, id)).toMatchObject({
      state: 'queued',
      attempts: 0,
      runAt: at(100),
      lockedBy: null,
    });
  });

  it('counts per state and priority, replays the latest failed job per key, prunes done jobs', async () => {
    const { prisma } = get().db;
    for (const n of [1, 2]) {
      const { id } = await enqueueJob(prisma, {
        kind: 'k',
        key: 'dup',
        priority: 5,
        maxAttempts: 1,
        now: at(n),
      });
      const [j] = await claimJobs(prisma, { workerId: 'w', limit: 1, leaseMs: LEASE, now: at(n) });
      expect(j?.id).toBe(id);
      await failJob(prisma, { job: j!, workerId: 'w', error: 'boom', now: at(n) });
    }
    const done = await enqueueJob(prisma, { kind: 'k', priority: 1, now: at(0) });
    await claimJobs(prisma, { workerId: 'w', limit: 1, leaseMs: LEASE, now: at(3) });
    await completeJob(prisma, { id: done.id, workerId: 'w', now: at(3) });
    await enqueueJob(prisma, { kind: 'k', priority: 1, runAt: at(999), now: at(0) });

    expect(await countJobs(prisma)).toEqual([
      { state: 'failed', priority: 5, count: 2 },
      { state: 'done', priority: 1, count: 1 },
      { state: 'queued', priority: 1, count: 1 },
    ]);
    expect(await replayFailedJobs(prisma, { now: at(10) })).toBe(1);
    expect(await replayFailedJobs(prisma, { now: at(10) })).toBe(0); // the key is taken now
    const [replayed] = await claimJobs(prisma, { workerId: 'w', limit: 1, leaseMs: LEASE, now: at(10) });
    expect(replayed).toMatchObject({ key: 'dup', attempts: 1, createdAt: at(2) });

    expect(await pruneDoneJobs(prisma, at(3))).toBe(0);
    expect(await pruneDoneJobs(prisma, at(4))).toBe(1);
  });

  it('runs leases on the database clock, whatever the clocks of the processes (issue 22, defect 3)', async () => {
    const { prisma } = get().db;
    const hour = 3_600_000;
    const real = Date.now();
    const lagging = new Date(real - hour);
    const ahead = new Date(real + hour);
    const { id } = await enqueueJob(prisma, { kind: 'skew', priority: 1, now: new Date(real - 2 * hour) });
    // The lagging process's minute-long lease is a minute of the database's time...
    const [held] = await claimOnDbTime(prisma, {
      workerId: 'lagging',
      limit: 1,
      leaseMs: 60_000,
      now: lagging,
    });
    expect(held?.id).toBe(id);
    const [{ now } = { now: new Date(0) }] = await prisma.$queryRaw<
      { now: Date }[]
    >`SELECT clock_timestamp() AS now`;
    expect(held!.lockedUntil!.getTime() - now.getTime()).toBeGreaterThan(50_000);
    // ...so a process an hour ahead neither takes it back nor claims it.
    expect(await requeueOnDbTime(prisma, ahead)).toMatchObject({ requeued: 0, failed: 0 });
    expect(
      await claimOnDbTime(prisma, {
        workerId: 'ahead',
        limit: 1,
        leaseMs: 60_000,
        now: ahead,
        kinds: ['skew'],
      }),
    ).toEqual([]);
    // Renewed by the lagging process: still a minute from the database's now.
    expect(
      await heartbeatOnDbTime(prisma, { ids: [id], workerId: 'lagging', leaseMs: 60_000, now: lagging }),
    ).toEqual([id]);
    expect((await getJob(prisma, id))!.lockedUntil!.getTime()).toBeGreaterThan(now.getTime() + 50_000);
    // A lease that has run out on the database's clock goes back, whoever asks.
    await heartbeatOnDbTime(prisma, { ids: [id], workerId: 'lagging', leaseMs: -1_000, now: lagging });
    const [taken] = await claimOnDbTime(prisma, {
      workerId: 'ahead',
      limit: 1,
      leaseMs: 60_000,
      now: ahead,
      kinds: ['skew'],
    });
    expect(taken).toMatchObject({ id, lockedBy: 'ahead', attempts: 2 });
  });
});
