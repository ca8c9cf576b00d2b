import type { BudgetStats, Priority, RequestBudget, RunOptions } from '../../../src/budget/types.js';

export interface RecordedRun {
  priority: Priority;
  label: string | undefined;
}
export interface RecordedPause {
  ms: number;
  reason: 'rate' | 'daily';
  /** Runs started before this pause: proves the pause came before the retry. */
  runsBefore: number;
}

/**
 * A budget that grants every request at once and records what it was asked: the runs (one per
 * Service request) and the pauses. Stands in for src/budget/ in the client's tests.
 */
export class PassThroughBudget implements RequestBudget {
  readonly runs: RecordedRun[] = [];
  readonly pauses: RecordedPause[] = [];
  /** When set, `run` rejects with it instead of running (e.g. the budget's own daily cap). */
  refuseWith: Error | undefined;

  async run<T>(priority: Priority, fn: () => Promise<T>, options?: RunOptions): Promise<T> {
    if (options?.signal?.aborted) throw options.signal.reason;
    if (this.refuseWith) throw this.refuseWith;
    this.runs.push({ priority, label: options?.label });
    return fn();
  }

  pauseFor(ms: number, reason: 'rate' | 'daily'): void {
    this.pauses.push({ ms, reason, runsBefore: this.runs.length });
  }

  stats(): BudgetStats {
    return {
      limits: { ratePerMinute: 60, burstPerSecond: 10, dailyCap: 10_000 },
      usedToday: this.runs.length,
      inLastSecond: 0,
      inLastMinute: 0,
      queued: { live: 0, writeback: 0, backfill: 0 },
      pausedUntil: null,
      dailyCapReached: false,
      lapsedSlots: 0,
    };
  }

  async close(): Promise<void> {}
}
