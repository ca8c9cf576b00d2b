import type { Clock } from '../util/clock.js';

const MAX_TIMER_MS = 2_147_483_647;

/**
 * Lets the one request at the head of the budget's queue sleep until a time or until something
 * changes (a higher priority arrived, a pause, a request finished). Wake-ups are counted, so one
 * that happens while the head is busy asking the ledger is not lost: `wait` returns at once when
 * the count moved since `seen`.
 */
export class Wakeup {
  private count = 0;
  /** Normally one waiter (the head); a head that is being aborted may overlap its successor. */
  private readonly waiters = new Set<() => void>();

  constructor(private readonly clock: Clock) {}

  /** The current wake-up count, to pass to `wait` later. */
  get seen(): number {
    return this.count;
  }

  wake(): void {
    this.count++;
    for (const resolve of [...this.waiters]) resolve();
  }

  /** Resolves at `untilMs` (null: no timer), on a wake-up after `seen`; rejects when aborted. */
  wait(untilMs: number | null, seen: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      if (seen !== this.count) return resolve();
      let timer: unknown;
      const onWake = () => {
        done();
        resolve();
      };
      const done = () => {
        this.waiters.delete(onWake);
        if (timer !== undefined) this.clock.clearTimer(timer);
        signal.removeEventListener('abort', onAbort);
      };
      const onAbort = () => {
        done();
        reject(signal.reason);
      };
      this.waiters.add(onWake);
      if (untilMs !== null && Number.isFinite(untilMs)) {
        timer = this.clock.setTimer(
          () => {
            timer = undefined;
            done();
            resolve();
          },
          // Timers overflow past 2^31-1 ms; the caller asks again when this one fires.
          Math.min(MAX_TIMER_MS, Math.max(0, untilMs - this.clock.now())),
        );
      }
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
