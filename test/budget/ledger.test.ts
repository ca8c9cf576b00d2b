import { describe, expect, it } from 'vitest';
import { InMemorySlotLedger } from '../../src/budget/ledger.js';
import type { SlotRequest } from '../../src/budget/types.js';

const NOON = Date.UTC(2026, 0, 1, 12, 0, 0);

function request(nowMs: number, overrides: Partial<SlotRequest> = {}): SlotRequest {
  return {
    nowMs,
    priority: 'backfill',
    limits: { ratePerMinute: 5, burstPerSecond: 3, dailyCap: 8 },
    windowReserve: 0,
    dailyReserve: 0,
    ...overrides,
  };
}

describe('InMemorySlotLedger', () => {
  it('grants exactly the free slots to concurrent acquires', async () => {
    const ledger = new InMemorySlotLedger();
    const grants = await Promise.all(Array.from({ length: 10 }, () => ledger.acquire(request(NOON))));
    expect(grants.filter((g) => g.granted)).toHaveLength(3);
    expect(grants[3]).toEqual({ granted: false, retryAtMs: NOON + 1000, dailyCapReached: false });
    expect(await ledger.snapshot(NOON)).toEqual({
      usedToday: 3,
      inLastSecond: 3,
      inLastMinute: 3,
      pausedUntil: null,
      pauseReason: null,
    });
  });

  it('counts the minute window and forgets starts that left it', async () => {
    const ledger = new InMemorySlotLedger();
    for (const t of [0, 1000, 2000, 3000, 4000])
      expect(await ledger.acquire(request(NOON + t))).toEqual({ granted: true });
    expect(await ledger.acquire(request(NOON + 5000))).toEqual({
      granted: false,
      retryAtMs: NOON + 60_000,
      dailyCapReached: false,
    });
    expect(ledger.peek(NOON + 60_000)).toMatchObject({ inLastSecond: 0, inLastMinute: 4, usedToday: 5 });
    expect(await ledger.acquire(request(NOON + 60_000))).toEqual({ granted: true });
    expect(ledger.peek(NOON + 200_000)).toMatchObject({ inLastMinute: 0, usedToday: 6 });
  });

  it('applies the margin the request carries', async () => {
    const ledger = new InMemorySlotLedger();
    const limits = { ratePerMinute: 60, burstPerSecond: 1, dailyCap: null };
    await ledger.acquire(request(NOON, { limits, marginMs: 7 }));
    expect(await ledger.acquire(request(NOON + 1000, { limits, marginMs: 7 }))).toEqual({
      granted: false,
      retryAtMs: NOON + 1007,
      dailyCapReached: false,
    });
    expect(await ledger.acquire(request(NOON + 1007, { limits, marginMs: 7 }))).toEqual({ granted: true });
  });

  it('reports the day cap and resets the count at UTC midnight', async () => {
    const ledger = new InMemorySlotLedger();
    const late = Date.UTC(2026, 0, 1, 23, 0, 0);
    const limits = { ratePerMinute: 100, burstPerSecond: 100, dailyCap: 2 };
    await ledger.acquire(request(late, { limits }));
    await ledger.acquire(request(late, { limits }));
    expect(await ledger.acquire(request(late, { limits }))).toEqual({
      granted: false,
      retryAtMs: Date.UTC(2026, 0, 2),
      dailyCapReached: true,
    });
    expect(await ledger.acquire(request(Date.UTC(2026, 0, 2), { limits }))).toEqual({ granted: true });
    expect(ledger.peek(Date.UTC(2026, 0, 2)).usedToday).toBe(1);
  });

  it('holds every priority during a pause and never shortens it', async () => {
    const ledger = new InMemorySlotLedger();
    await ledger.pauseUntil(NOON + 5000);
    await ledger.pauseUntil(NOON + 1000, 'daily');
    expect(await ledger.acquire(request(NOON, { priority: 'live' }))).toEqual({
      granted: false,
      retryAtMs: NOON + 5000,
      dailyCapReached: false,
    });
    await ledger.pauseUntil(NOON + 5000, 'daily');
    expect(await ledger.acquire(request(NOON, { priority: 'live' }))).toMatchObject({
      dailyCapReached: true,
    });
    expect(ledger.peek(NOON)).toMatchObject({ pausedUntil: NOON + 5000, pauseReason: 'daily' });
    expect(await ledger.acquire(request(NOON + 5000, { priority: 'live' }))).toEqual({ granted: true });
    expect(ledger.peek(NOON + 5000)).toMatchObject({ pausedUntil: null, pauseReason: null });
  });
});
