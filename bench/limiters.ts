/**
 * What a team would configure instead of crm-sync's budget, behind the same RequestBudget
 * interface so `npm run bench:budget` drives them through the same Service client against the
 * same strict sliding-window sandbox. Each is set up as its README suggests for "N per minute,
 * at most M per second", with live requests given priority; none of them hears about a 429
 * (pauseFor is a no-op), as out of the box.
 *
 * - p-queue, per minute: `intervalCap: ratePerMinute, interval: 60_000` (the plan read literally);
 * - p-queue, per second: `intervalCap: ratePerMinute / 60, interval: 1000` (the rate spread out);
 * - bottleneck: a reservoir of `ratePerMinute` refilled every 60 s, `minTime: 1000 / burst`.
 */
import Bottleneck from 'bottleneck';
import PQueue from 'p-queue';
import { BudgetClosedError } from '../src/budget/errors.js';
import type { PlanLimits } from '../src/budget/plans.js';
import type { BudgetStats, Priority, RequestBudget } from '../src/budget/types.js';

export type LimiterName = 'p-queue/min' | 'p-queue/s' | 'bottleneck';
export const LIMITER_NAMES: readonly LimiterName[] = ['p-queue/min', 'p-queue/s', 'bottleneck'];

/** Higher runs first, as p-queue orders. */
const RANK: Record<Priority, number> = { live: 2, writeback: 1, backfill: 0 };

function stats(limits: PlanLimits, queued: number): BudgetStats {
  return {
    limits,
    usedToday: 0,
    inLastSecond: 0,
    inLastMinute: 0,
    queued: { live: 0, writeback: 0, backfill: queued },
    pausedUntil: null,
    dailyCapReached: false,
    lapsedSlots: 0,
  };
}

function pQueueBudget(limits: PlanLimits, perSecond: boolean): RequestBudget {
  const queue = new PQueue(
    perSecond
      ? { intervalCap: Math.max(1, Math.floor(limits.ratePerMinute / 60)), interval: 1000 }
      : { intervalCap: limits.ratePerMinute, interval: 60_000 },
  );
  const closing = new AbortController();
  return {
    run: (priority, fn) => {
      if (closing.signal.aborted) return Promise.reject(new BudgetClosedError());
      return queue.add(fn, { priority: RANK[priority], signal: closing.signal }).catch((error: unknown) => {
        throw closing.signal.aborted ? new BudgetClosedError() : error;
      }) as Promise<never>;
    },
    pauseFor: () => undefined,
    stats: () => stats(limits, queue.size),
    close: async () => {
      closing.abort();
      queue.clear();
    },
  };
}

function bottleneckBudget(limits: PlanLimits): RequestBudget {
  const limiter = new Bottleneck({
    reservoir: limits.ratePerMinute,
    reservoirRefreshAmount: limits.ratePerMinute,
    reservoirRefreshInterval: 60_000,
    minTime: Math.ceil(1000 / limits.burstPerSecond),
  });
  let closed = false;
  return {
    // Bottleneck's priorities run 0 (first) to 9.
    run: (priority, fn) => {
      if (closed) return Promise.reject(new BudgetClosedError());
      return limiter.schedule({ priority: 5 - RANK[priority] }, fn).catch((error: unknown) => {
        throw closed ? new BudgetClosedError() : error;
      });
    },
    pauseFor: () => undefined,
    stats: () => stats(limits, limiter.counts().QUEUED ?? 0),
    close: async () => {
      closed = true;
      await limiter.stop({ dropWaitingJobs: true });
    },
  };
}

export function createLimiterBudget(name: LimiterName, limits: PlanLimits): RequestBudget {
  switch (name) {
    case 'p-queue/min':
      return pQueueBudget(limits, false);
    case 'p-queue/s':
      return pQueueBudget(limits, true);
    case 'bottleneck':
      return bottleneckBudget(limits);
  }
}
