import { describe, expect, it } from 'vitest';
import { dbClockOf } from '../../src/store/dbClock.js';
import { getLease, releaseLease, tryAcquireLease } from '../../src/store/leaderLease.js';
import { DATABASE_KINDS, useMigratedDatabase } from './helpers.js';

const T0 = new Date('2026-03-02T10:00:00.000Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);
const TTL = 30_000;

describe.each(DATABASE_KINDS)('LeaderLease on %s', (kind) => {
  const get = useMigratedDatabase(kind);

  it('lets one holder lead, renew, and hands over only after expiry', async () => {
    const { prisma } = get().db;
    const a = await tryAcquireLease(prisma, {
      name: 'poller',
      holder: 'A',
      ttlMs: TTL,
      dbClock: dbClockOf(at(0)),
    });
    expect(a).toEqual({
      leader: true,
      lease: { name: 'poller', holder: 'A', acquiredAt: at(0), expiresAt: at(30) },
    });

    const b = await tryAcquireLease(prisma, {
      name: 'poller',
      holder: 'B',
      ttlMs: TTL,
      dbClock: dbClockOf(at(10)),
    });
    expect(b.leader).toBe(false);
    expect(b.lease?.holder).toBe('A');

    const renewed = await tryAcquireLease(prisma, {
      name: 'poller',
      holder: 'A',
      ttlMs: TTL,
      dbClock: dbClockOf(at(20)),
    });
    expect(renewed.lease).toEqual({ name: 'poller', holder: 'A', acquiredAt: at(0), expiresAt: at(50) });
    expect(
      (await tryAcquireLease(prisma, { name: 'poller', holder: 'B', ttlMs: TTL, dbClock: dbClockOf(at(49)) }))
        .leader,
    ).toBe(false);

    // A stops renewing: B takes over once the lease has run out.
    const takeover = await tryAcquireLease(prisma, {
      name: 'poller',
      holder: 'B',
      ttlMs: TTL,
      dbClock: dbClockOf(at(50)),
    });
    expect(takeover).toEqual({
      leader: true,
      lease: { name: 'poller', holder: 'B', acquiredAt: at(50), expiresAt: at(80) },
    });
    expect(
      (await tryAcquireLease(prisma, { name: 'poller', holder: 'A', ttlMs: TTL, dbClock: dbClockOf(at(51)) }))
        .leader,
    ).toBe(false);
  });

  it('frees the lease on release, and only for its holder', async () => {
    const { prisma } = get().db;
    await tryAcquireLease(prisma, { name: 'other', holder: 'A', ttlMs: TTL, dbClock: dbClockOf(at(0)) });
    expect(await releaseLease(prisma, { name: 'other', holder: 'B' })).toBe(false);
    expect(await releaseLease(prisma, { name: 'other', holder: 'A' })).toBe(true);
    expect(await getLease(prisma, 'other')).toBeNull();
    expect(
      (await tryAcquireLease(prisma, { name: 'other', holder: 'B', ttlMs: TTL, dbClock: dbClockOf(at(1)) }))
        .leader,
    ).toBe(true);
  });

  it('lets exactly one of many simultaneous contenders win', async () => {
    const { prisma } = get().db;
    const results = await Promise.all(
      ['p1', 'p2', 'p3', 'p4', 'p5'].map((holder) =>
        tryAcquireLease(prisma, { name: 'race', holder, ttlMs: TTL, dbClock: dbClockOf(at(0)) }),
      ),
    );
    const winners = results.filter((r) => r.leader);
    expect(winners).toHaveLength(1);
    for (const r of results) expect(r.lease?.holder).toBe(winners[0]?.lease?.holder);
  });

  it("starts and ends leases on the database clock, not the holder's (issue 22, defect 3)", async () => {
    const { prisma } = get().db;
    const dbNow = async () =>
      (await prisma.$queryRaw<{ now: Date }[]>`SELECT clock_timestamp() AS now`)[0]!.now.getTime();
    const before = await dbNow();
    const a = await tryAcquireLease(prisma, { name: 'db-time', holder: 'A', ttlMs: 60_000 });
    const after = await dbNow();
    expect(a.leader).toBe(true);
    const acquired = a.lease!.acquiredAt.getTime();
    expect(acquired).toBeGreaterThanOrEqual(before);
    expect(acquired).toBeLessThanOrEqual(after);
    expect(a.lease!.expiresAt.getTime() - acquired).toBe(60_000);
    // However far B's own clock runs ahead, the lease is A's until the database's clock passes it.
    expect((await tryAcquireLease(prisma, { name: 'db-time', holder: 'B', ttlMs: 60_000 })).leader).toBe(
      false,
    );
    await tryAcquireLease(prisma, { name: 'db-time', holder: 'A', ttlMs: -1_000 });
    const b = await tryAcquireLease(prisma, { name: 'db-time', holder: 'B', ttlMs: 60_000 });
    expect(b).toMatchObject({ leader: true, lease: { holder: 'B' } });
  });
});
