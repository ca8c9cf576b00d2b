import { describe, expect, it } from 'vitest';
import { getLease, releaseLease, tryAcquireLease } from '../../src/store/leaderLease.js';
import { DATABASE_KINDS, useMigratedDatabase } from './helpers.js';

const T0 = new Date('2026-03-02T10:00:00.000Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);
const TTL = 30_000;

describe.each(DATABASE_KINDS)('LeaderLease on %s', (kind) => {
  const get = useMigratedDatabase(kind);

  it('lets one holder lead, renew, and hands over only after expiry', async () => {
    const { prisma } = get().db;
    const a = await tryAcquireLease(prisma, { name: 'poller', holder: 'A', ttlMs: TTL, now: at(0) });
    expect(a).toEqual({
      leader: true,
      lease: { name: 'poller', holder: 'A', acquiredAt: at(0), expiresAt: at(30) },
    });

    const b = await tryAcquireLease(prisma, { name: 'poller', holder: 'B', ttlMs: TTL, now: at(10) });
    expect(b.leader).toBe(false);
    expect(b.lease?.holder).toBe('A');

    const renewed = await tryAcquireLease(prisma, { name: 'poller', holder: 'A', ttlMs: TTL, now: at(20) });
    expect(renewed.lease).toEqual({ name: 'poller', holder: 'A', acquiredAt: at(0), expiresAt: at(50) });
    expect(
      (await tryAcquireLease(prisma, { name: 'poller', holder: 'B', ttlMs: TTL, now: at(49) })).leader,
    ).toBe(false);

    // A stops renewing: B takes over once the lease has run out.
    const takeover = await tryAcquireLease(prisma, { name: 'poller', holder: 'B', ttlMs: TTL, now: at(50) });
    expect(takeover).toEqual({
      leader: true,
      lease: { name: 'poller', holder: 'B', acquiredAt: at(50), expiresAt: at(80) },
    });
    expect(
      (await tryAcquireLease(prisma, { name: 'poller', holder: 'A', ttlMs: TTL, now: at(51) })).leader,
    ).toBe(false);
  });

  it('frees the lease on release, and only for its holder', async () => {
    const { prisma } = get().db;
    await tryAcquireLease(prisma, { name: 'other', holder: 'A', ttlMs: TTL, now: at(0) });
    expect(await releaseLease(prisma, { name: 'other', holder: 'B' })).toBe(false);
    expect(await releaseLease(prisma, { name: 'other', holder: 'A' })).toBe(true);
    expect(await getLease(prisma, 'other')).toBeNull();
    expect(
      (await tryAcquireLease(prisma, { name: 'other', holder: 'B', ttlMs: TTL, now: at(1) })).leader,
    ).toBe(true);
  });

  it('lets exactly one of many simultaneous contenders win', async () => {
    const { prisma } = get().db;
    const results = await Promise.all(
      ['p1', 'p2', 'p3', 'p4', 'p5'].map((holder) =>
        tryAcquireLease(prisma, { name: 'race', holder, ttlMs: TTL, now: at(0) }),
      ),
    );
    const winners = results.filter((r) => r.leader);
    expect(winners).toHaveLength(1);
    for (const r of results) expect(r.lease?.holder).toBe(winners[0]?.lease?.holder);
  });
});
