/**
 * The sandboxes' clock: the same shape as crm-sync's own (`now`, `setTimer`, `clearTimer`), so a
 * test passes one fake clock to the worker and the sandboxes alike. Kept here rather than imported
 * because the sandboxes depend on nothing in the product.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Schedules `fn` after `ms`; returns a handle for `clearTimer`. */
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer: (fn, ms) => {
    const t = setTimeout(fn, ms);
    // A sandbox's timers must never keep a finished test process alive.
    t.unref?.();
    return t;
  },
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** Resolves after `ms` on the given clock (added latency, stalls). */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimer(resolve, ms));
}
