import type { Clock } from './clock.js';

interface Timer {
  id: number;
  at: number;
  fn: () => void;
}

/**
 * A manual clock for tests and simulations: time moves only when `advance` is called, and timers
 * fire in order of their due time. Kept in src/ because benchmarks and simulations use it too.
 */
export class FakeClock implements Clock {
  private current: number;
  private timers: Timer[] = [];
  private nextId = 1;

  constructor(start = Date.UTC(2026, 0, 1, 12, 0, 0)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(fn: () => void, ms: number): unknown {
    const timer = { id: this.nextId++, at: this.current + Math.max(0, ms), fn };
    this.timers.push(timer);
    return timer.id;
  }

  clearTimer(handle: unknown): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }

  /** Number of timers waiting to fire. */
  pending(): number {
    return this.timers.length;
  }

  /**
   * Moves time forward by `ms`, firing due timers in order and letting promise callbacks run
   * between them, so that code awaiting a timer sees the time at which it fired.
   */
  async advance(ms: number): Promise<void> {
    const end = this.current + ms;
    for (;;) {
      await flushMicrotasks();
      this.timers.sort((a, b) => a.at - b.at || a.id - b.id);
      const next = this.timers[0];
      if (!next || next.at > end) break;
      this.timers.shift();
      this.current = Math.max(this.current, next.at);
      next.fn();
    }
    this.current = end;
    await flushMicrotasks();
  }
}

/** Lets queued promise callbacks run (several rounds, since callbacks queue more callbacks). */
export async function flushMicrotasks(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}
