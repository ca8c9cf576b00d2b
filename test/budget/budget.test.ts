import { afterEach, describe, expect, it } from 'vitest';
import { createRequestBudget, type RequestBudgetDeps } from '../../src/budget/budget.js';
import { BudgetClosedError } from '../../src/budget/errors.js';
import { InMemorySlotLedger } from '../../src/budget/ledger.js';
import type { PlanLimits } from '../../src/budget/plans.js';
import { LiveReserve } from '../../src/budget/liveReserve.js';
import {
  DailyCapReachedError,
  type Priority,
  type RequestBudget,
  type SlotGrants,
  type SlotRequest,
} from '../../src/budget/types.js';
import { DAY_MS } from '../../src/budget/window.js';
import { sleep } from '../../src/util/clock.js';
import { maxInAnySpan, newClock, settle, type Start, type TestClock } from './helpers.js';

const open: RequestBudget[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((b) => b.close()));
});

/** An in-memory ledger that notes how many slots each ask wanted. */
function countingLedger() {
  const asked: number[] = [];
  const ledger = new (class extends InMemorySlotLedger {
    override acquireMany(request: SlotRequest, wanted: number): Promise<SlotGrants> {
      asked.push(wanted);
      return super.acquireMany(request, wanted);
    }
  })();
  return { ledger, asked };
}

function harness(limits: PlanLimits, deps: Partial<RequestBudgetDeps> = {}, clock: TestClock = newClock()) {
  const budget = createRequestBudget({ limits, clock, safetyMarginMs: 0, ...deps });
  open.push(budget);
  const starts: Start[] = [];
  let nextId = 0;
  function request(priority: Priority, options: { holdMs?: number; signal?: AbortSignal } = {}) {
    const id = nextId++;
    const result = budget.run(
      priority,
      async () => {
        starts.push({ id, priority, at: clock.now() });
        if (options.holdMs) await sleep(clock, options.holdMs);
        return id;
      },
      { signal: options.signal },
    );
    result.catch(() => undefined);
    return result;
  }
  return { budget, clock, starts, request, order: () => starts.map((s) => s.id) };
}

describe('request budget', () => {
  it('starts a request at once when the windows allow it, and returns its result', async () => {
    const h = harness({ ratePerMinute: 60, burstPerSecond: 10, dailyCap: null });
    await expect(h.request('backfill')).resolves.toBe(0);
    expect(h.starts[0]!.at).toBe(h.clock.now());
  });

  it('passes on the error of fn', async () => {
    const h = harness({ ratePerMinute: 60, burstPerSecond: 10, dailyCap: null });
    const failure = new Error('boom');
    await expect(h.budget.run('live', () => Promise.reject(failure))).rejects.toBe(failure);
    await expect(
      h.budget.run('live', () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
  });

  it('lets a live request overtake queued backfill, and writeback overtake backfill', async () => {
    const h = harness(
      { ratePerMinute: 60, burstPerSecond: 1, dailyCap: null },
      { liveWindowReserve: 0, paceLowerPriorities: false },
    );
    for (let i = 0; i < 4; i++) void h.request('backfill');
    await settle();
    expect(h.order()).toEqual([0]);
    await h.clock.runFor(10);
    void h.request('writeback');
    void h.request('live');
    await h.clock.runFor(4000);
    // Backfill 1 was already at the head of the queue waiting for a slot; it steps back.
    expect(h.order()).toEqual([0, 5, 4, 1, 2]);
    expect(h.starts.map((s) => s.at - h.starts[0]!.at)).toEqual([0, 1000, 2000, 3000, 4000]);
  });

  it('keeps FIFO order within a priority', async () => {
    const h = harness({ ratePerMinute: 60, burstPerSecond: 1, dailyCap: null }, { liveWindowReserve: 0 });
    for (let i = 0; i < 5; i++) void h.request('writeback');
    await h.clock.runFor(2500);
    void h.request('live');
    await h.clock.runFor(10_000);
    expect(h.order()).toEqual([0, 1, 2, 5, 3, 4]);
  });

  it('live finds its reserved slot at once while backfill saturates the windows', async () => {
    const h = harness(
      { ratePerMinute: 10, burstPerSecond: 5, dailyCap: null },
      { liveWindowReserve: 1, paceLowerPriorities: false },
    );
    for (let i = 0; i < 30; i++) void h.request('backfill');
    await h.clock.runFor(5000);
    expect(h.starts.length).toBe(9); // 10 per minute, one kept for live
    await h.clock.runFor(20_000);
    expect(h.starts.length).toBe(9);
    const askedAt = h.clock.now();
    const live = h.request('live');
    await settle();
    await expect(live).resolves.toBe(30);
    expect(h.starts.at(-1)).toMatchObject({ priority: 'live', at: askedAt });
  });

  it('without a reserve, live waits for the next free slot', async () => {
    const h = harness(
      { ratePerMinute: 10, burstPerSecond: 5, dailyCap: null },
      { liveWindowReserve: 0, paceLowerPriorities: false },
    );
    for (let i = 0; i < 30; i++) void h.request('backfill');
    await h.clock.runFor(25_000);
    expect(h.starts.length).toBe(10);
    const live = h.request('live');
    await h.clock.runFor(40_000);
    await expect(live).resolves.toBe(30);
    expect(h.starts[10]).toMatchObject({ priority: 'live', at: h.starts[0]!.at + 60_000 });
  });

  it('paces lower priorities evenly over the minute, so live waits at most about one pace', async () => {
    const h = harness({ ratePerMinute: 60, burstPerSecond: 10, dailyCap: null }, { liveWindowReserve: 0 });
    for (let i = 0; i < 200; i++) void h.request('backfill');
    await h.clock.runFor(90_250);
    const t0 = h.starts[0]!.at;
    // One early start (the quarter-pace tolerance), then one a second; at the minute turnover the
    // window waits for the first start to leave.
    const offsets = h.starts.map((s) => s.at - t0);
    expect(offsets.slice(0, 4)).toEqual([0, 750, 1750, 2750]);
    expect(offsets.slice(58, 63)).toEqual([57_750, 58_750, 60_000, 60_750, 61_750]);
    expect(offsets.at(-1)).toBe(89_750);
    const askedAt = h.clock.now();
    void h.request('live');
    await h.clock.runFor(2000);
    const live = h.starts.find((s) => s.priority === 'live')!;
    // The minute window is full; the next slot frees when the start of 30 750 leaves it.
    expect(live.at - t0).toBe(90_750);
    expect(live.at - askedAt).toBe(500);
  });

  it('lower priorities give way in pace to live starts', async () => {
    const h = harness({ ratePerMinute: 60, burstPerSecond: 10, dailyCap: null }, { liveWindowReserve: 0 });
    for (let i = 0; i < 10; i++) void h.request('backfill');
    await h.clock.runFor(2000);
    const t0 = h.starts[0]!.at;
    for (let i = 0; i < 3; i++) void h.request('live');
    await h.clock.runFor(6000);
    const offsets = h.starts.map((s) => `${s.priority[0]}${s.at - t0}`);
    // Three extra starts at 2000: backfill resumes three paces later, back on its grid.
    expect(offsets).toEqual(['b0', 'b750', 'b1750', 'l2000', 'l2000', 'l2000', 'b5750', 'b6750', 'b7750']);
  });

  it('a 429 pause holds every priority until it ends, also in a budget sharing the ledger', async () => {
    const clock = newClock();
    const ledger = new InMemorySlotLedger();
    const limits = { ratePerMinute: 600, burstPerSecond: 50, dailyCap: null };
    const a = harness(limits, { ledger }, clock);
    const b = harness(limits, { ledger }, clock);
    a.budget.pauseFor(5000, 'rate');
    const pausedAt = clock.now();
    void a.request('live');
    void a.request('backfill');
    void b.request('live');
    void b.request('writeback');
    await clock.runFor(4999);
    expect(a.starts.length + b.starts.length).toBe(0);
    expect(a.budget.stats().pausedUntil).toBe(pausedAt + 5000);
    expect(b.budget.stats().pausedUntil).toBe(pausedAt + 5000);
    await clock.runFor(2000);
    const all = [...a.starts, ...b.starts];
    expect(all.length).toBe(4);
    expect(Math.min(...all.map((s) => s.at))).toBe(pausedAt + 5000);
    expect(a.budget.stats().pausedUntil).toBeNull();
  });

  it('a pause never shortens a longer one', async () => {
    const h = harness({ ratePerMinute: 60, burstPerSecond: 10, dailyCap: null });
    const t0 = h.clock.now();
    h.budget.pauseFor(3000, 'rate');
    h.budget.pauseFor(1000, 'rate');
    void h.request('live');
    await h.clock.runFor(5000);
    expect(h.starts[0]!.at).toBe(t0 + 3000);
  });

  it('rejects past the daily share, keeps the reserve for live, resets at UTC midnight', async () => {
    const clock = newClock();
    await clock.runFor(Date.UTC(2026, 0, 1, 23, 59, 0) - clock.now());
    const h = harness(
      { ratePerMinute: 600, burstPerSecond: 50, dailyCap: 10 },
      { liveDailyReserve: 0.2, paceLowerPriorities: false },
      clock,
    );
    const backfill = Array.from({ length: 9 }, () => h.request('backfill'));
    await clock.runFor(100);
    await Promise.allSettled(backfill);
    expect(h.starts.length).toBe(8);
    const midnight = Date.UTC(2026, 0, 2);
    await expect(backfill[8]).rejects.toEqual(new DailyCapReachedError(midnight));
    expect(h.budget.stats()).toMatchObject({ usedToday: 8, dailyCapReached: true });
    await expect(h.request('live')).resolves.toBeTypeOf('number');
    await expect(h.request('live')).resolves.toBeTypeOf('number');
    const third = h.request('live');
    await settle();
    await expect(third).rejects.toBeInstanceOf(DailyCapReachedError);
    await clock.runFor(midnight - clock.now());
    await expect(h.request('backfill')).resolves.toBeTypeOf('number');
    expect(h.budget.stats()).toMatchObject({ usedToday: 1, dailyCapReached: false });
  });

  it('a daily 429 rejects every priority until the pause ends', async () => {
    const h = harness({ ratePerMinute: 60, burstPerSecond: 10, dailyCap: null });
    h.budget.pauseFor(60_000, 'daily');
    const resetsAt = h.clock.now() + 60_000;
    await expect(h.request('live')).rejects.toEqual(new DailyCapReachedError(resetsAt));
    expect(h.budget.stats().dailyCapReached).toBe(true);
    await h.clock.runFor(60_000);
    await expect(h.request('live')).resolves.toBeTypeOf('number');
  });

  it('abort removes a waiting request, queued or at the head', async () => {
    const h = harness({ ratePerMinute: 60, burstPerSecond: 1, dailyCap: null }, { liveWindowReserve: 0 });
    void h.request('backfill');
    const head = new AbortController();
    const queued = new AbortController();
    const atHead = h.request('backfill', { signal: head.signal });
    const inQueue = h.request('backfill', { signal: queued.signal });
    void h.request('backfill');
    await settle();
    expect(h.budget.stats().queued.backfill).toBe(3);
    queued.abort(new Error('not needed'));
    head.abort();
    await expect(inQueue).rejects.toThrow('not needed');
    await expect(atHead).rejects.toMatchObject({ name: 'AbortError' });
    expect(h.budget.stats().queued.backfill).toBe(1);
    await h.clock.runFor(3000);
    expect(h.order()).toEqual([0, 3]);
    expect(h.starts[1]!.at - h.starts[0]!.at).toBe(1000);
  });

  it('an already aborted signal never starts fn', async () => {
    const h = harness({ ratePerMinute: 60, burstPerSecond: 10, dailyCap: null });
    await expect(h.request('live', { signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(h.starts).toEqual([]);
  });

  it('limits requests in flight', async () => {
    const h = harness({ ratePerMinute: 600, burstPerSecond: 50, dailyCap: null }, { concurrency: 2 });
    for (let i = 0; i < 4; i++) void h.request('live', { holdMs: 1000 });
    await h.clock.runFor(999);
    expect(h.starts.length).toBe(2);
    await h.clock.runFor(1);
    expect(h.starts.length).toBe(4);
  });

  it('takes the slots of the requests queued behind the head in one ledger round trip', async () => {
    const { ledger, asked } = countingLedger();
    const h = harness(
      { ratePerMinute: 600, burstPerSecond: 5, dailyCap: null },
      { ledger, concurrency: 8, liveWindowReserve: 1, paceLowerPriorities: false },
    );
    for (let i = 0; i < 10; i++) void h.request('backfill', { holdMs: 1000 });
    void h.request('live', { holdMs: 1000 });
    await h.clock.runFor(0);
    // The first head asked alone (nothing queued yet), live for itself, then a backfill head for
    // the free concurrency (8 - 2 in flight), of which the burst left two: the fifth is live's.
    expect(asked.slice(0, 3)).toEqual([1, 1, 6]);
    const t0 = h.clock.now();
    expect(h.starts.filter((s) => s.at === t0).map((s) => s.priority)).toEqual([
      'backfill',
      'live',
      'backfill',
      'backfill',
    ]);
    expect(ledger.peek(t0).inLastSecond).toBe(4);
    await h.clock.runFor(5000);
    expect(h.starts).toHaveLength(11);
    // Every slot granted was used, and no second held more than the burst.
    expect(ledger.peek(h.clock.now()).usedToday).toBe(11);
    for (const s of h.starts) {
      expect(h.starts.filter((o) => o.at > s.at - 1000 && o.at <= s.at).length).toBeLessThanOrEqual(5);
    }
    expect(asked.length).toBeLessThan(11);
  });

  it('decides slots for when requests leave: a ledger that answers late never lets the sends exceed a window', async () => {
    // A shared ledger under load answers some requests 400 ms after the moment their slot was
    // decided for, others at once. Without allowing for that, a late request's slot ages out of
    // our window 400 ms before the Service's, and an on-time request after it arrives too soon.
    const lags = [400, 400, 0, 400, 0, 0];
    let answers = 0;
    const clock = newClock();
    const ledger = new (class extends InMemorySlotLedger {
      override async acquire(request: SlotRequest) {
        const grant = await super.acquire(request);
        await sleep(clock, lags[answers++ % lags.length]!);
        return grant;
      }
    })();
    const h = harness(
      { ratePerMinute: 1, burstPerSecond: 1, dailyCap: null },
      { ledger, liveWindowReserve: 0, paceLowerPriorities: false, safetyMarginMs: 100 },
      clock,
    );
    for (let i = 0; i < 6; i++) void h.request('live');
    await clock.runFor(12 * 60_000);
    // What the Service counts: the starts as they happened, in its own sliding windows.
    const sends = h.starts.map((s) => s.at);
    expect(sends).toHaveLength(6);
    expect(maxInAnySpan(sends, 60_000)).toBe(1);
    // The first late answer came before any lag was known: that request was not sent in its slot.
    expect(h.budget.stats().lapsedSlots).toBeGreaterThan(0);
  });

  it('reports counters', async () => {
    const h = harness(
      { ratePerMinute: 10, burstPerSecond: 3, dailyCap: 1000 },
      { paceLowerPriorities: false },
    );
    for (let i = 0; i < 3; i++) void h.request('live');
    await h.clock.runFor(1500);
    for (let i = 0; i < 4; i++) void h.request('backfill');
    void h.request('writeback');
    await settle();
    expect(h.budget.stats()).toEqual({
      limits: { ratePerMinute: 10, burstPerSecond: 3, dailyCap: 1000 },
      usedToday: 5,
      inLastSecond: 2,
      inLastMinute: 5,
      queued: { live: 0, writeback: 0, backfill: 3 },
      pausedUntil: null,
      dailyCapReached: false,
      lapsedSlots: 0,
    });
  });

  it('reports the last snapshot of a ledger that can only answer asynchronously', async () => {
    const inner = new InMemorySlotLedger();
    const ledger = {
      acquire: inner.acquire.bind(inner),
      pauseUntil: inner.pauseUntil.bind(inner),
      snapshot: inner.snapshot.bind(inner),
    };
    const h = harness({ ratePerMinute: 60, burstPerSecond: 10, dailyCap: null }, { ledger });
    await h.request('live');
    expect(h.budget.stats().usedToday).toBe(0);
    await settle();
    expect(h.budget.stats()).toMatchObject({ usedToday: 1, inLastSecond: 1, inLastMinute: 1 });
  });

  it('close rejects waiting requests and any later run', async () => {
    const h = harness({ ratePerMinute: 60, burstPerSecond: 1, dailyCap: null });
    void h.request('live');
    const waiting = [h.request('live'), h.request('backfill')];
    await settle();
    await h.budget.close();
    for (const w of waiting) await expect(w).rejects.toBeInstanceOf(BudgetClosedError);
    await expect(h.request('live')).rejects.toBeInstanceOf(BudgetClosedError);
    expect(h.starts.length).toBe(1);
  });

  it('refuses impossible limits', () => {
    const clock = newClock();
    expect(() =>
      createRequestBudget({ clock, limits: { ratePerMinute: 0, burstPerSecond: 1, dailyCap: null } }),
    ).toThrow(/positive integers/);
    expect(() =>
      createRequestBudget({
        clock,
        limits: { ratePerMinute: 1, burstPerSecond: 1, dailyCap: 5 },
        liveDailyReserve: 1,
      }),
    ).toThrow(/share/);
  });

  describe('a burst of 30 live calls in 10 s while backfill saturates the sales plan', () => {
    const SALES = { ratePerMinute: 60, burstPerSecond: 10, dailyCap: null };

    /** Waits (ms) of the 30 live requests of a burst starting 180 s in, sorted. */
    async function burstWaits(liveReserve: LiveReserve, clock: TestClock): Promise<number[]> {
      const h = harness(SALES, { liveReserve }, clock);
      for (let i = 0; i < 400; i++) void h.request('backfill');
      await h.clock.runFor(180_000);
      const lives: { asked: number; id: Promise<number> }[] = [];
      for (let i = 0; i < 30; i++) {
        lives.push({ asked: h.clock.now(), id: h.request('live') });
        await h.clock.runFor(333);
      }
      await h.clock.runFor(60_000);
      const startedAt = new Map(h.starts.map((s) => [s.id, s.at]));
      const waits = await Promise.all(lives.map(async (l) => startedAt.get(await l.id)! - l.asked));
      return waits.sort((a, b) => a - b);
    }

    it('gets every context within 5 s when the burst came at this time yesterday', async () => {
      const clock = newClock();
      const reserve = new LiveReserve();
      for (let i = 0; i < 30; i++) reserve.record(clock.now() + 180_000 - DAY_MS + i * 333);
      const waits = await burstWaits(reserve, clock);
      expect(waits.at(-2)!).toBeLessThanOrEqual(5_000); // the p95 of 30
    });

    it('without that history, the last calls wait for slots the backfill frees, one a second', async () => {
      const waits = await burstWaits(new LiveReserve(), newClock());
      expect(waits.at(-2)!).toBeGreaterThan(10_000);
    });
  });
});
