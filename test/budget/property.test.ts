/**
 * Random arrival patterns against the budget, each replayable from its seed: whatever arrives,
 * the starts never break a window or the daily cap, the reserves hold, priorities are honoured and
 * every request settles.
 */
import { describe, expect, it } from 'vitest';
import { createRequestBudget } from '../../src/budget/budget.js';
import { LiveReserve } from '../../src/budget/liveReserve.js';
import type { PlanLimits } from '../../src/budget/plans.js';
import { DailyCapReachedError, PRIORITIES, type Priority } from '../../src/budget/types.js';
import { DAY_MS, utcDayStart } from '../../src/budget/window.js';
import { sleep } from '../../src/util/clock.js';
import { maxInAnySpan, newClock, seededRandom } from './helpers.js';

const RUNS = 200;

interface Arrival {
  id: number;
  priority: Priority;
  at: number;
  holdMs: number;
  abortAt: number | null;
  startedAt: number | null;
  /** Order of the start among all starts (several can share a millisecond). */
  startSeq: number;
  /** When the request was refused or its abort took effect. */
  endedAt: number | null;
  outcome: 'pending' | 'done' | 'aborted' | 'capped';
}

function scenario(seed: number) {
  const rnd = seededRandom(seed);
  const int = (n: number) => Math.floor(rnd() * n);
  const burst = 1 + int(6);
  const limits: PlanLimits = {
    burstPerSecond: burst,
    ratePerMinute: rnd() < 0.2 ? 1 + int(burst + 2) : burst + int(burst * 6),
    dailyCap: rnd() < 0.3 ? 5 + int(50) : null,
  };
  const options = {
    liveWindowReserve: int(3),
    liveDailyReserve: rnd() < 0.5 ? 0 : rnd() * 0.5,
    safetyMarginMs: int(10),
    paceLowerPriorities: rnd() < 0.5,
    concurrency: rnd() < 0.3 ? 1 + int(4) : 16,
  };
  // Some runs start just before UTC midnight, to cross a daily reset.
  const start = rnd() < 0.3 ? Date.UTC(2026, 0, 1, 23, 58, 0) + int(120_000) : Date.UTC(2026, 0, 1, 12, 0, 0);
  const arrivals: Arrival[] = [];
  const count = 20 + int(80);
  const meanGap = [0, 50, 400, 3000][int(4)]!;
  let t = 0;
  for (let id = 0; id < count; id++) {
    if (rnd() > 0.3) t += Math.floor(-Math.log(1 - rnd()) * meanGap);
    const r = rnd();
    arrivals.push({
      id,
      priority: r < 0.25 ? 'live' : r < 0.5 ? 'writeback' : 'backfill',
      at: start + t,
      holdMs: int(4) === 0 ? 0 : int(1500),
      abortAt: rnd() < 0.1 ? start + t + int(5000) : null,
      startedAt: null,
      startSeq: -1,
      endedAt: null,
      outcome: 'pending',
    });
  }
  // Some runs see 429s: each pauses the whole gate.
  const pauses = Array.from({ length: rnd() < 0.3 ? 1 + int(3) : 0 }, () => ({
    at: start + int(Math.max(1, t)),
    ms: 1 + int(8000),
  }));
  // Some runs have a learned live reserve, from yesterday's live requests around this time: it
  // may only ever widen the reserve, so every check below holds with it too.
  const history = Array.from({ length: rnd() < 0.4 ? 1 + int(40) : 0 }, () => start - DAY_MS + int(120_000));
  return { limits, options, start, arrivals, pauses, history };
}

async function simulate(seed: number) {
  const { limits, options, start, arrivals, pauses, history } = scenario(seed);
  const clock = newClock(start);
  const liveReserve = history.length > 0 ? new LiveReserve() : undefined;
  for (const at of history) liveReserve?.record(at);
  const budget = createRequestBudget({ limits, clock, ...options, ...(liveReserve && { liveReserve }) });
  let startSeq = 0;
  for (const a of arrivals) {
    clock.setTimer(() => {
      const controller = new AbortController();
      if (a.abortAt !== null) clock.setTimer(() => controller.abort(), a.abortAt - a.at);
      budget
        .run(
          a.priority,
          async () => {
            a.startedAt = clock.now();
            a.startSeq = startSeq++;
            if (a.holdMs > 0) await sleep(clock, a.holdMs);
          },
          { signal: controller.signal },
        )
        .then(
          () => (a.outcome = 'done'),
          (error: unknown) => {
            a.endedAt = clock.now();
            a.outcome = error instanceof DailyCapReachedError ? 'capped' : 'aborted';
          },
        );
    }, a.at - start);
  }
  for (const p of pauses) clock.setTimer(() => budget.pauseFor(p.ms, 'rate'), p.at - start);
  for (let i = 0; i < 2000 && arrivals.some((a) => a.outcome === 'pending'); i++) await clock.runFor(60_000);
  const stats = budget.stats();
  await budget.close();
  return { limits, options, arrivals, pauses, stats };
}

function check(seed: number, result: Awaited<ReturnType<typeof simulate>>): void {
  const { limits, options, arrivals, pauses, stats } = result;
  const where = `seed ${seed}`;
  expect(
    arrivals.filter((a) => a.outcome === 'pending'),
    where,
  ).toEqual([]);
  expect(stats.queued, where).toEqual({ live: 0, writeback: 0, backfill: 0 });
  const started = arrivals.filter((a) => a.startedAt !== null).sort((a, b) => a.startSeq - b.startSeq);
  const times = started.map((a) => a.startedAt!);
  const margin = options.safetyMarginMs;

  // What a Service counting (t - W, t] sees, and our stricter spans with the margin.
  expect(maxInAnySpan(times, 1000 + margin), where).toBeLessThanOrEqual(limits.burstPerSecond);
  expect(maxInAnySpan(times, 60_000 + margin), where).toBeLessThanOrEqual(limits.ratePerMinute);

  const reserveDaily = limits.dailyCap === null ? 0 : Math.floor(limits.dailyCap * options.liveDailyReserve);
  const perDay = new Map<number, number>();
  for (const [index, a] of started.entries()) {
    const t = a.startedAt!;
    const before = times.slice(0, index + 1);
    const day = utcDayStart(t);
    perDay.set(day, (perDay.get(day) ?? 0) + 1);
    const usedThatDay = perDay.get(day)!;
    if (limits.dailyCap !== null) {
      const daily = a.priority === 'live' ? limits.dailyCap : limits.dailyCap - reserveDaily;
      expect(usedThatDay, where).toBeLessThanOrEqual(daily);
    }
    if (a.priority !== 'live') {
      // Reserved slots: a lower-priority start never fills a window past its allowance.
      const inSecond = before.filter((s) => s > t - 1000 - margin && s <= t).length;
      const inMinute = before.filter((s) => s > t - 60_000 - margin && s <= t).length;
      // The reserve never takes a window's last slot from lower priorities.
      const allowance = (limit: number) => limit - Math.min(options.liveWindowReserve, limit - 1);
      expect(inSecond, where).toBeLessThanOrEqual(allowance(limits.burstPerSecond));
      expect(inMinute, where).toBeLessThanOrEqual(allowance(limits.ratePerMinute));
    }
    // Priority: nothing starts while a request of a higher priority that arrived earlier waits.
    const rank = PRIORITIES.indexOf(a.priority);
    const overtaken = arrivals.filter(
      (b) => PRIORITIES.indexOf(b.priority) < rank && b.at < t && (b.startedAt ?? b.endedAt!) > t,
    );
    expect(
      overtaken.map((b) => b.id),
      `${where}: request ${a.id} overtook`,
    ).toEqual([]);
  }
  for (const p of pauses) {
    const inPause = times.filter((t) => t > p.at && t < p.at + p.ms);
    expect(inPause, `${where}: started during a pause`).toEqual([]);
  }
  // An aborted wait never starts later.
  for (const a of arrivals) {
    if (a.abortAt !== null && a.startedAt !== null) expect(a.startedAt, where).toBeLessThanOrEqual(a.abortAt);
    if (a.outcome === 'capped') expect(limits.dailyCap, where).not.toBeNull();
  }
}

describe('request budget under random arrivals', () => {
  it(`keeps every window, the daily cap, the reserves and the priorities (${RUNS} seeded runs)`, async () => {
    let starts = 0;
    for (let seed = 1; seed <= RUNS; seed++) {
      const result = await simulate(seed);
      check(seed, result);
      starts += result.arrivals.filter((a) => a.startedAt !== null).length;
    }
    // The runs must actually exercise the gate.
    expect(starts).toBeGreaterThan(RUNS * 20);
  });
});
