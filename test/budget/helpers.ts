import { FakeClock } from '../../src/util/fakeClock.js';
import type { Priority } from '../../src/budget/types.js';

// The sandbox's seeded mulberry32, so every random run can be replayed from its seed.
export { seededRandom } from '@crm-sync/sandboxes/service/rng';

/**
 * FakeClock lets a fixed number of microtask rounds run between timers; a chain of grants through
 * p-queue can be longer. This clock knows its next due timer, so `runFor` moves from timer to
 * timer and lets every promise callback finish (a macrotask turn) before moving time again.
 */
export class TestClock extends FakeClock {
  private due = new Map<unknown, number>();

  override setTimer(fn: () => void, ms: number): unknown {
    const at = this.now() + Math.max(0, ms);
    const id: unknown = super.setTimer(() => {
      this.due.delete(id);
      fn();
    }, ms);
    this.due.set(id, at);
    return id;
  }

  override clearTimer(handle: unknown): void {
    this.due.delete(handle);
    super.clearTimer(handle);
  }

  /** Moves time forward by `ms`, settling all promise work at every timer. */
  async runFor(ms: number): Promise<void> {
    const end = this.now() + ms;
    for (;;) {
      await settle();
      const next = Math.min(...this.due.values());
      if (!(next <= end)) break;
      await this.advance(Math.max(0, next - this.now()));
    }
    await this.advance(end - this.now());
    await settle();
  }
}

export interface Start {
  id: number;
  priority: Priority;
  at: number;
}

/** Lets every pending promise callback run, without moving time. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Most starts found in any span (t - spanMs, t], checked at every start (where maxima occur). */
export function maxInAnySpan(times: readonly number[], spanMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let max = 0;
  let lo = 0;
  for (let hi = 0; hi < sorted.length; hi++) {
    while (sorted[lo]! <= sorted[hi]! - spanMs) lo++;
    max = Math.max(max, hi - lo + 1);
  }
  return max;
}

export function newClock(start = Date.UTC(2026, 0, 1, 12, 0, 0)): TestClock {
  return new TestClock(start);
}
