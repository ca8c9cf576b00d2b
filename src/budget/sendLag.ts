/**
 * How late granted requests start after the moment their slot was decided for; slots are decided
 * for "now plus the largest recent lag" and the windows widened by as much. Why: docs/budget.md,
 * "Send lag".
 */
import { MINUTE_MS, SECOND_MS } from './window.js';

/** Lags are remembered this long: a slot's start matters to the 60 s window, with room to spare. */
const LOOKBACK_MS = 2 * MINUTE_MS;
const BUCKET_MS = SECOND_MS;

export interface SendLag {
  /** A request decided for `decidedAtMs` started at `startedAtMs`. */
  observe(decidedAtMs: number, startedAtMs: number): void;
  /** The largest lag observed in the last two minutes, ms (0 when none). */
  allowance(nowMs: number): number;
}

export function createSendLag(): SendLag {
  // The largest lag per second, for the seconds that had one, oldest first.
  const buckets: { second: number; maxMs: number }[] = [];
  const forget = (nowMs: number) => {
    const oldest = Math.floor((nowMs - LOOKBACK_MS) / BUCKET_MS);
    while (buckets.length > 0 && buckets[0]!.second < oldest) buckets.shift();
  };
  return {
    observe(decidedAtMs, startedAtMs) {
      const lag = startedAtMs - decidedAtMs;
      if (!(lag > 0)) return;
      const second = Math.floor(startedAtMs / BUCKET_MS);
      const last = buckets.at(-1);
      if (last?.second === second) last.maxMs = Math.max(last.maxMs, lag);
      else buckets.push({ second, maxMs: lag });
      forget(startedAtMs);
    },
    allowance(nowMs) {
      forget(nowMs);
      let max = 0;
      for (const b of buckets) max = Math.max(max, b.maxMs);
      return max;
    },
  };
}
