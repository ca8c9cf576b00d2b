import { describe, expect, it } from 'vitest';
import type { PlanLimits } from '../../src/budget/plans.js';
import type { Priority, SlotRequest } from '../../src/budget/types.js';
import { dbClockOf } from '../../src/store/dbClock.js';
import { createDbSlotLedger } from '../../src/store/dbSlotLedger.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { DATABASE_KINDS, useMigratedDatabase } from './helpers.js';

const LIMITS: PlanLimits = { burstPerSecond: 3, ratePerMinute: 5, dailyCap: 100 };

function request(clock: FakeClock, priority: Priority, over: Partial<SlotRequest> = {}): SlotRequest {
  return { nowMs: clock.now(), priority, limits: LIMITS, windowReserve: 1, dailyReserve: 0, ...over };
}

describe.each(DATABASE_KINDS)('DbSlotLedger on %s', (kind) => {
  const get = useMigratedDatabase(kind);

  it('grants the burst, keeps the reserve for live, and says when the window frees', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 12));
    const ledger = createDbSlotLedger({ db: get().db.prisma, ledger: 'burst', dbClock: dbClockOf(clock) });
    const t0 = clock.now();
    expect(await ledger.acquire(request(clock, 'backfill'))).toEqual({ granted: true });
    await clock.advance(100);
    expect(await ledger.acquire(request(clock, 'writeback'))).toEqual({ granted: true });
    expect(await ledger.acquire(request(clock, 'backfill'))).toEqual({
      granted: false,
      retryAtMs: t0 + 1000,
      dailyCapReached: false,
    });
    expect(await ledger.acquire(request(clock, 'live'))).toEqual({ granted: true });
    expect(await ledger.acquire(request(clock, 'live'))).toMatchObject({
      granted: false,
      retryAtMs: t0 + 1000,
    });
    expect(await ledger.snapshot(clock.now())).toEqual({
      usedToday: 3,
      inLastSecond: 3,
      inLastMinute: 3,
      pausedUntil: null,
      pauseReason: null,
    });

    await clock.advance(900); // t0 + 1000: the first start has left the 1 s window
    expect(await ledger.acquire(request(clock, 'live'))).toEqual({ granted: true });
    // The 60 s window (5) is now full for live, 4 for the rest.
    await clock.advance(1000);
    expect(await ledger.acquire(request(clock, 'live'))).toEqual({ granted: true });
    expect(await ledger.acquire(request(clock, 'live'))).toEqual({
      granted: false,
      retryAtMs: t0 + 60_000,
      dailyCapReached: false,
    });
    expect(await ledger.snapshot(clock.now())).toEqual({
      usedToday: 5,
      inLastSecond: 1,
      inLastMinute: 5,
      pausedUntil: null,
      pauseReason: null,
    });

    await clock.advance(58_000); // t0 + 60 s
    expect(await ledger.snapshot(clock.now())).toMatchObject({ usedToday: 5, inLastMinute: 4 });
    expect(await ledger.acquire(request(clock, 'live'))).toEqual({ granted: true });
    // Starts are pruned from budget_request after two minutes; the day keeps counting.
    const startsUpToT0 = () =>
      get().db.prisma.budgetRequest.count({ where: { ledger: 'burst', startedAt: { lte: new Date(t0) } } });
    expect(await startsUpToT0()).toBe(1);
    await clock.advance(60_000);
    expect(await ledger.acquire(request(clock, 'live'))).toEqual({ granted: true });
    expect(await startsUpToT0()).toBe(0);
    expect((await ledger.snapshot(clock.now())).usedToday).toBe(7);
  });

  it('stops at the daily cap until the next UTC day', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 23, 59, 0));
    const ledger = createDbSlotLedger({ db: get().db.prisma, ledger: 'daily', dbClock: dbClockOf(clock) });
    const limits = { burstPerSecond: 10, ratePerMinute: 100, dailyCap: 3 };
    for (let i = 0; i < 2; i++) {
      expect(await ledger.acquire(request(clock, 'backfill', { limits, dailyReserve: 1 }))).toEqual({
        granted: true,
      });
    }
    expect(await ledger.acquire(request(clock, 'backfill', { limits, dailyReserve: 1 }))).toEqual({
      granted: false,
      retryAtMs: Date.UTC(2026, 0, 2),
      dailyCapReached: true,
    });
    expect(await ledger.acquire(request(clock, 'live', { limits, dailyReserve: 1 }))).toEqual({
      granted: true,
    });
    expect(await ledger.acquire(request(clock, 'live', { limits }))).toMatchObject({ dailyCapReached: true });

    await clock.advance(60_000); // 00:00 UTC
    expect(await ledger.acquire(request(clock, 'backfill', { limits }))).toEqual({ granted: true });
    expect((await ledger.snapshot(clock.now())).usedToday).toBe(1);
  });

  it('holds every priority during a shared pause, which only ever grows', async () => {
    const db = get().db.prisma;
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 12));
    const a = createDbSlotLedger({ db, ledger: 'pause', dbClock: dbClockOf(clock) });
    const b = createDbSlotLedger({ db, ledger: 'pause', dbClock: dbClockOf(clock) }); // another process's view
    const until = clock.now() + 5_000;
    await a.pauseUntil(until, 'rate', clock.now());
    await b.pauseUntil(clock.now() + 1_000, 'rate', clock.now());
    expect(await b.acquire(request(clock, 'live'))).toEqual({
      granted: false,
      retryAtMs: until,
      dailyCapReached: false,
    });
    expect(await b.snapshot(clock.now())).toMatchObject({ pausedUntil: until, pauseReason: 'rate' });
    await clock.advance(5_000);
    expect(await b.acquire(request(clock, 'live'))).toEqual({ granted: true });
    expect(await a.snapshot(clock.now())).toMatchObject({ pausedUntil: null, pauseReason: null });
  });

  it("answers dailyCapReached during a 'daily' pause, which wins a tie with a rate pause", async () => {
    const db = get().db.prisma;
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 12));
    const ledger = createDbSlotLedger({ db, ledger: 'daily-pause', dbClock: dbClockOf(clock) });
    const midnight = Date.UTC(2026, 0, 2);
    await ledger.pauseUntil(midnight, 'rate', clock.now());
    await ledger.pauseUntil(midnight, 'daily', clock.now());
    await ledger.pauseUntil(midnight, 'rate', clock.now());
    expect(await ledger.acquire(request(clock, 'live'))).toEqual({
      granted: false,
      retryAtMs: midnight,
      dailyCapReached: true,
    });
    expect((await ledger.snapshot(clock.now())).pauseReason).toBe('daily');
    await ledger.pauseUntil(midnight + 1_000, 'rate', clock.now()); // a longer pause takes its reason along
    expect((await ledger.snapshot(clock.now())).pauseReason).toBe('rate');
  });

  it('never grants more than the burst to concurrent acquirers at one instant', async () => {
    const db = get().db.prisma;
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 12));
    const ledgers = [0, 1].map(() => createDbSlotLedger({ db, ledger: 'race', dbClock: dbClockOf(clock) }));
    const grants = await Promise.all(
      Array.from({ length: 12 }, (_, i) => ledgers[i % 2]!.acquire(request(clock, 'live'))),
    );
    expect(grants.filter((g) => g.granted)).toHaveLength(LIMITS.burstPerSecond);
    expect((await ledgers[0]!.snapshot(clock.now())).inLastSecond).toBe(LIMITS.burstPerSecond);
  });

  it('grants slots in bulk without passing the burst, the reserve or the day, across two ledgers', async () => {
    const db = get().db.prisma;
    const limits: PlanLimits = { burstPerSecond: 10, ratePerMinute: 100, dailyCap: 40 };
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 12));
    const ledgers = [0, 1].map(() => createDbSlotLedger({ db, ledger: 'bulk', dbClock: dbClockOf(clock) }));
    const bulk = (i: number, wanted: number) =>
      ledgers[i % 2]!.acquireMany!(
        request(clock, 'backfill', { limits, windowReserve: 2, dailyReserve: 4 }),
        wanted,
      );
    // Six acquirers asking for 4 each at one instant: the burst less live's 2 is 8 in all.
    const grants = await Promise.all(Array.from({ length: 6 }, (_, i) => bulk(i, 4)));
    const counts = grants.map((g) => (g.granted ? g.count : 0));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(8);
    expect(grants.filter((g) => !g.granted)).not.toHaveLength(0);
    expect(grants.find((g) => !g.granted)).toMatchObject({ retryAtMs: clock.now() + 1000 });
    // Live still has its reserve.
    expect(await ledgers[0]!.acquireMany!(request(clock, 'live', { limits, windowReserve: 2 }), 1)).toEqual({
      granted: true,
      count: 1,
    });
    expect((await ledgers[1]!.snapshot(clock.now())).inLastSecond).toBe(9);

    // The day's cap (40, of which 4 for live: dailyReserve) bounds a bulk grant too.
    for (let t = 1; t <= 3; t++) {
      await clock.advance(1000);
      await bulk(t, 10);
    }
    await clock.advance(1000);
    const last = await bulk(0, 10);
    expect(last).toEqual({ granted: true, count: 36 - 9 - 3 * 8 });
    expect(await ledgers[1]!.snapshot(clock.now())).toMatchObject({ usedToday: 36 });
  });
});

/**
 * Replicas whose clocks disagree (issue 22, defect 3): one 300 ms behind the database, one 2 s
 * ahead, one minutes ahead. Windows, the UTC day and pruning go by the database's clock, so they
 * count one budget; by their own clocks, the one ahead would see an empty second, count into the
 * next day, and prune the others' starts.
 */
describe.each(DATABASE_KINDS)('DbSlotLedger with skewed process clocks on %s', (kind) => {
  const get = useMigratedDatabase(kind);
  const limits: PlanLimits = { burstPerSecond: 3, ratePerMinute: 100, dailyCap: 100 };
  const ask = (clock: FakeClock): SlotRequest => ({
    nowMs: clock.now(),
    priority: 'live',
    limits,
    windowReserve: 0,
    dailyReserve: 0,
  });
  const skewed = (db: FakeClock, offsetMs: number) => new FakeClock(db.now() + offsetMs);

  it('counts the same windows and the same UTC day, by the database clock', async () => {
    // The database's clock half a second before midnight; the replicas either side of it.
    const dbTime = new FakeClock(Date.UTC(2026, 0, 1, 23, 59, 59, 500));
    const behind = skewed(dbTime, -300);
    const ahead = skewed(dbTime, 2_000);
    const far = skewed(dbTime, 3 * 60_000);
    expect(new Date(ahead.now()).getUTCDate()).toBe(2);
    const db = get().db.prisma;
    const make = () => createDbSlotLedger({ db, ledger: 'skew', dbClock: dbClockOf(dbTime) });
    const [a, b, c] = [make(), make(), make()];

    for (let i = 0; i < 3; i++) expect(await a.acquire(ask(behind))).toEqual({ granted: true });
    // Two seconds ahead, its own second would hold none of them.
    expect(await b.acquire(ask(ahead))).toEqual({
      granted: false,
      retryAtMs: ahead.now() + 1_000,
      dailyCapReached: false,
    });
    // Minutes ahead, it would also have pruned them and counted into the next day.
    expect(await c.acquire(ask(far))).toMatchObject({ granted: false });
    expect(await db.budgetRequest.count({ where: { ledger: 'skew' } })).toBe(3);
    for (const [ledger, clock] of [
      [a, behind],
      [b, ahead],
      [c, far],
    ] as const) {
      expect(await ledger.snapshot(clock.now())).toMatchObject({ usedToday: 3, inLastSecond: 3 });
    }
    expect(
      (await db.budgetLedger.findMany({ where: { ledger: 'skew' }, select: { day: true, used: true } })).map(
        (r) => [r.day.toISOString().slice(0, 10), r.used],
      ),
    ).toEqual([['2026-01-01', 3]]);

    // The database's midnight, not a replica's, starts the new day.
    await dbTime.advance(1_000);
    await behind.advance(1_000);
    expect(await a.acquire(ask(behind))).toEqual({ granted: true });
    expect(await b.snapshot(ahead.now())).toMatchObject({ usedToday: 1, inLastSecond: 1 });
  });

  it('uses clock_timestamp() by default: replicas either side of their midnight count one day', async () => {
    const db = get().db.prisma;
    const make = () => createDbSlotLedger({ db, ledger: 'skew-real' });
    const [a, b] = [make(), make()];
    const behind = new FakeClock(Date.UTC(2026, 0, 1, 23, 59, 59, 700));
    const ahead = new FakeClock(Date.UTC(2026, 0, 2, 0, 0, 2));
    expect(await a.acquire(ask(behind))).toEqual({ granted: true });
    expect(await b.acquire(ask(ahead))).toEqual({ granted: true });
    const [today] = await db.$queryRaw<{ day: string }[]>`
      SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day`;
    const rows = await db.budgetLedger.findMany({ where: { ledger: 'skew-real' } });
    expect(rows.map((r) => [r.day.toISOString().slice(0, 10), r.used])).toEqual([[today!.day, 2]]);
    expect(await a.snapshot(behind.now())).toMatchObject({ usedToday: 2, inLastSecond: 2 });
    expect(await b.snapshot(ahead.now())).toMatchObject({ usedToday: 2, inLastSecond: 2 });
  });
});
