import { afterEach, describe, expect, it } from 'vitest';
import { EmbeddedDatabaseInUseError } from '../../src/store/embeddedLock.js';
import { dbClockOf } from '../../src/store/dbClock.js';
import { countJobs } from '../../src/store/jobAdmin.js';
import { enqueueJob } from '../../src/store/jobEnqueue.js';
import { claimJobs } from '../../src/store/jobQueue.js';
import { getLease } from '../../src/store/leaderLease.js';
import { spawnStoreChild, type StoreChild } from './child/spawnChild.js';
import {
  createMigratedDatabase,
  openTestDatabase,
  TEST_DATABASE_URL,
  useMigratedDatabase,
} from './helpers.js';

/** Real processes against one database. Job claiming and leadership need PostgreSQL. */
const children: StoreChild[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill();
});
function start(mode: string, options: Record<string, unknown>): StoreChild {
  const child = spawnStoreChild(mode, options);
  children.push(child);
  return child;
}

describe.skipIf(!TEST_DATABASE_URL)('several processes on PostgreSQL', () => {
  const get = useMigratedDatabase('postgres');
  const childDb = () => ({ databaseUrl: get().target.url, dataDir: get().target.dataDir });

  it('two processes claim 1,000 jobs: each claimed exactly once, none lost', async () => {
    const { prisma } = get().db;
    await prisma.job.deleteMany();
    const now = new Date(Date.now() - 1000);
    const ids = new Set<number>();
    for (let i = 0; i < 1000; i++) {
      ids.add((await enqueueJob(prisma, { kind: 'bulk', key: `bulk:${i}`, priority: i % 3, now })).id);
    }
    const workers = ['A', 'B'].map((id) => start('claim-all', { ...childDb(), workerId: id, batch: 7 }));
    await Promise.all(workers.map((w) => w.waitFor((m) => m.ready === true, 'ready')));
    for (const w of workers) w.send('go');
    await Promise.all(workers.map((w) => w.waitFor((m) => typeof m.done === 'number', 'done')));

    const claimedBy = workers.map((w) =>
      w.messages.flatMap((m) => (m.claimed as number[] | undefined) ?? []),
    );
    const all = claimedBy.flat();
    expect(all).toHaveLength(1000);
    expect(new Set(all)).toEqual(ids);
    // Both really worked (concurrently, from one "go"), and no completion found its job taken.
    for (const mine of claimedBy) expect(mine.length).toBeGreaterThan(0);
    expect(workers.flatMap((w) => w.messages.filter((m) => 'lost' in m))).toEqual([]);
    expect(await countJobs(prisma, { kind: 'bulk' })).toEqual(
      [2, 1, 0].map((priority) => ({ state: 'done', priority, count: expect.any(Number) as number })),
    );
    expect(await prisma.job.count({ where: { kind: 'bulk', NOT: { state: 'done', attempts: 1 } } })).toBe(0);
  });

  it("takes back a killed process's leased jobs once the lease has run out", async () => {
    const { prisma } = get().db;
    await prisma.job.deleteMany();
    const past = new Date(Date.now() - 1000);
    for (let i = 0; i < 5; i++) await enqueueJob(prisma, { kind: 'leased', priority: 1, now: past });
    const leaseMs = 30_000;
    const holder = start('claim-and-hang', { ...childDb(), workerId: 'doomed', batch: 3, leaseMs });
    const claimed = await holder.waitFor((m) => Array.isArray(m.claimed), 'claimed');
    const held = claimed.claimed as number[];
    expect(held).toHaveLength(3);
    holder.kill();
    await holder.exited;

    // Leases run on the database's clock: judged here at one millisecond either side of their end.
    const [{ until } = { until: new Date(0) }] = await prisma.$queryRaw<{ until: Date }[]>`
      SELECT max(locked_until) AS until FROM job WHERE locked_by = 'doomed'`;
    const before = await claimJobs(prisma, {
      workerId: 'heir',
      limit: 10,
      leaseMs,
      now: new Date(),
      dbClock: dbClockOf(new Date(until.getTime() - 1)),
    });
    expect(before.map((j) => j.id).filter((id) => held.includes(id))).toEqual([]);
    const after = await claimJobs(prisma, {
      workerId: 'heir',
      limit: 10,
      leaseMs,
      now: new Date(),
      dbClock: dbClockOf(new Date(until.getTime() + 1)),
    });
    expect(after.map((j) => j.id).sort((a, b) => a - b)).toEqual([...held].sort((a, b) => a - b));
    for (const job of after) expect(job).toMatchObject({ attempts: 2, lockedBy: 'heir' });
  });

  it('fails leadership over to the other process within the lease when the leader is killed', async () => {
    const ttlMs = 2_000;
    const a = start('lead', { ...childDb(), workerId: 'A', ttlMs, renewMs: 200 });
    expect(await a.waitFor((m) => m.ready === true, 'ready')).toMatchObject({ leader: true });
    const b = start('lead', { ...childDb(), workerId: 'B', ttlMs, renewMs: 200 });
    expect(await b.waitFor((m) => m.ready === true, 'ready')).toMatchObject({ leader: false });

    const lease = await getLease(get().db.prisma, 'test-leader');
    expect(lease?.holder).toBe('A');
    a.kill();
    const killedAt = Date.now();
    await a.exited;
    const took = await b.waitFor((m) => m.leader === true, 'leadership');
    // B takes over once A's last renewal has expired: never before, at most one renewal period late.
    expect(took.atMs as number).toBeGreaterThanOrEqual(lease!.expiresAt.getTime() - ttlMs);
    expect((took.atMs as number) - killedAt).toBeLessThanOrEqual(ttlMs + 1_000);
    expect((await getLease(get().db.prisma, 'test-leader'))?.holder).toBe('B');
  });

  it('shares the request budget: two processes at one instant get the burst between them', async () => {
    const nowMs = Date.UTC(2026, 0, 1, 12);
    const procs = ['A', 'B'].map((id) =>
      start('acquire', { ...childDb(), workerId: id, nowMs, acquires: 15 }),
    );
    await Promise.all(procs.map((p) => p.waitFor((m) => m.ready === true, 'ready')));
    for (const p of procs) p.send('go');
    const results = await Promise.all(
      procs.map((p) => p.waitFor((m) => typeof m.granted === 'number', 'granted')),
    );
    expect(results.reduce((sum, r) => sum + (r.granted as number), 0)).toBe(10);
  });
});

describe('the embedded database between processes', () => {
  it('refuses a second process with a clear message, and takes over the lock of a killed one', async () => {
    const target = await createMigratedDatabase('embedded');
    let failed = true;
    try {
      const db = await openTestDatabase(target);
      let second: StoreChild;
      try {
        second = start('hold-open', { dataDir: target.dataDir, workerId: 'second' });
        const refused = await second.waitFor((m) => typeof m.openError === 'string', 'refusal');
        expect(refused.openError).toBe(
          `the embedded database at ${target.dataDir} is in use by process ${process.pid}; stop it or set DATABASE_URL`,
        );
        expect(await second.exited).toBe(3);
      } finally {
        await db.close();
      }

      const holder = start('hold-open', { dataDir: target.dataDir, workerId: 'holder' });
      await holder.waitFor((m) => m.opened === true, 'opened');
      const inUse = openTestDatabase(target);
      await expect(inUse).rejects.toBeInstanceOf(EmbeddedDatabaseInUseError);
      await expect(inUse).rejects.toThrow(`in use by process ${holder.pid};`);
      holder.kill();
      await holder.exited;
      // The lock names a dead process now: taken over, and the data survived the kill.
      const reopened = await openTestDatabase(target);
      try {
        expect(await reopened.prisma.job.count()).toBe(0);
      } finally {
        await reopened.close();
      }
      failed = false;
    } finally {
      await target.drop(failed);
    }
  });
});
