/**
 * The CRM slot ledger in the database (issue 22, defect 4): two ledgers on one database stand for
 * two replicas. Together they keep one window and one daily allowance, decide on the database's
 * clock whatever their own clocks say, and honour each other's pauses.
 */
import { describe, expect, it } from 'vitest';
import type { Acquired, CrmSlotLedger } from '../../src/crm/limits/ledger.js';
import type { SlotAsk } from '../../src/crm/limits/slots.js';
import { createDbCrmLedger } from '../../src/store/crmSlotLedger.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { DATABASE_KINDS, useMigratedDatabase } from '../store/helpers.js';

const WINDOW: SlotAsk = {
  lane: 'general',
  limit: 3,
  windowMs: 2_000,
  dailyReserve: 0,
  dailyHold: { kind: 'midnight' },
};

const granted = (a: Acquired) => {
  if (!a.granted) throw new Error(`refused: ${JSON.stringify(a)}`);
  return a.slot;
};

describe.each(DATABASE_KINDS)('the shared CRM ledger (%s)', (kind) => {
  const get = useMigratedDatabase(kind);
  // The replicas' own clocks disagree by hours: only durations are taken from them.
  const clocks = [new FakeClock(Date.now() - 3 * 3_600_000), new FakeClock(Date.now() + 2 * 3_600_000)];
  const replicas = (ledger: string): [CrmSlotLedger, CrmSlotLedger] => {
    const db = get().db.prisma;
    return [
      createDbCrmLedger({ db, ledger, clock: clocks[0]! }),
      createDbCrmLedger({ db, ledger, clock: clocks[1]! }),
    ];
  };
  /** Lets a replica's quiet-moment flush run (its answers and report, written a moment later). */
  const aMomentLater = async (i: number, ledger: string) => {
    await clocks[i]!.advance(300);
    const db = get().db.prisma;
    await expect
      .poll(async () => (await db.crmRequest.count({ where: { ledger, doneAt: null } })) === 0)
      .toBe(true);
    await expect
      .poll(async () => (await db.crmLedger.findUnique({ where: { ledger } }))?.reportFrom)
      .toBeTruthy();
  };

  it('keeps one window for both, on the database clock, held until a window after each answer', async () => {
    const [a, b] = replicas('window');
    const first = granted(await a.acquire(WINDOW));
    granted(await b.acquire(WINDOW));
    granted(await a.acquire(WINDOW));
    // The fourth, from either, waits: the three are in flight, so at least a window from now.
    for (const r of [a, b]) {
      const refused = await r.acquire(WINDOW);
      expect(refused).toMatchObject({ granted: false, daily: false });
      expect((refused as { waitMs: number }).waitMs).toBeGreaterThan(1_900);
      expect((refused as { waitMs: number }).waitMs).toBeLessThanOrEqual(2_000);
    }
    // A's first answered 50 ms after it asked: its slot frees 50 ms after its start plus the window.
    a.release(first, 50);
    await a.close(); // writes the answer now
    const again = (await b.acquire(WINDOW)) as { granted: false; waitMs: number };
    expect(again.granted).toBe(false);
    const started = first.startedAt;
    const now = await dbNow();
    expect(now + again.waitMs).toBeCloseTo(started + 50 + 2_000, -2);
    // Two processes' grants in one window: never more than the limit.
    const rows = await get().db.prisma.crmRequest.count({ where: { ledger: 'window' } });
    expect(rows).toBe(3);
  });

  it('searches keep a window of their own', async () => {
    const [a, b] = replicas('lanes');
    const search: SlotAsk = { ...WINDOW, lane: 'search', limit: 1, windowMs: 1_000 };
    granted(await a.acquire(search));
    expect(await b.acquire(search)).toMatchObject({ granted: false });
    granted(await b.acquire(WINDOW));
  });

  it("honours another process's pause (a 429 it drew), searches-only pauses only searches", async () => {
    const [a, b] = replicas('pauses');
    await a.pause(1_500, 'all');
    const refused = await b.acquire(WINDOW);
    expect(refused).toMatchObject({ granted: false, daily: false });
    expect((refused as { waitMs: number }).waitMs).toBeGreaterThan(1_000);

    const [c, d] = replicas('search-pause');
    await c.pause(1_000, 'search');
    expect(await d.acquire({ ...WINDOW, lane: 'search' })).toMatchObject({ granted: false });
    granted(await d.acquire(WINDOW));
  });

  it('stops both at the daily allowance one reported, counting what the report may have missed', async () => {
    const [a, b] = replicas('daily');
    const ask: SlotAsk = { ...WINDOW, limit: Infinity };
    const one = granted(await a.acquire(ask));
    const two = granted(await b.acquire(ask));
    // A's response says 3 remain; B's request, still in flight, may not be in that count.
    a.report({ limit: 10, remaining: 3 }, one.startedAt);
    a.release(one, 5);
    granted(await a.acquire(ask));
    const refused = await b.acquire(ask);
    expect(refused).toMatchObject({ granted: false, daily: true });
    // HubSpot's allowance starts again at UTC midnight.
    const now = await dbNow();
    const midnight = (Math.floor(now / 86_400_000) + 1) * 86_400_000;
    expect(now + (refused as { waitMs: number }).waitMs).toBeCloseTo(midnight, -2);
    expect(await a.acquire(ask)).toMatchObject({ granted: false, daily: true });
    b.release(two, 5);
  });

  it('after a daily pause, lets one request read the new usage before the others (Salesforce)', async () => {
    const [a, b] = replicas('org');
    const ask: SlotAsk = {
      lane: 'call',
      limit: Infinity,
      windowMs: 0,
      dailyReserve: 5,
      dailyHold: { kind: 'pause', ms: 300 },
    };
    const one = granted(await a.acquire(ask));
    a.report({ limit: 100, remaining: 4 }, one.startedAt);
    a.release(one, 5);
    await aMomentLater(0, 'org');
    expect(await b.acquire(ask)).toMatchObject({ granted: false, daily: true });
    await new Promise((resolve) => setTimeout(resolve, 350)); // the database's clock moves on its own
    const probe = granted(await b.acquire(ask));
    expect(await a.acquire(ask)).toMatchObject({ granted: false, daily: false });
    b.report({ limit: 100, remaining: 60 }, probe.startedAt);
    b.release(probe, 5);
    await aMomentLater(1, 'org');
    granted(await a.acquire(ask));
  });

  async function dbNow(): Promise<number> {
    const [row] = await get().db.prisma.$queryRaw<{ now: number }[]>`
      SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now`;
    return Number(row!.now);
  }
});
