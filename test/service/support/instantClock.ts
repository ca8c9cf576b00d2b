import type { Clock } from '../../../src/util/clock.js';

/**
 * Real time for `now()`, but every timer fires on the next turn of the event loop, and the
 * requested delays are recorded. Lets tests over real HTTP check the client's waits (backoff,
 * Retry-After) without spending them. FakeClock is used where the order in time matters.
 */
export class InstantClock implements Clock {
  readonly waits: number[] = [];
  private handles = new Map<number, NodeJS.Immediate>();
  private nextId = 1;

  now(): number {
    return Date.now();
  }

  setTimer(fn: () => void, ms: number): unknown {
    this.waits.push(ms);
    const id = this.nextId++;
    this.handles.set(
      id,
      setImmediate(() => {
        this.handles.delete(id);
        fn();
      }),
    );
    return id;
  }

  clearTimer(handle: unknown): void {
    const immediate = this.handles.get(handle as number);
    if (immediate) clearImmediate(immediate);
    this.handles.delete(handle as number);
  }
}
