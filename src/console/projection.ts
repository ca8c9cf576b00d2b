/**
 * When the Service's daily cap runs out at the current pace (requests started in the last
 * minute), for the console's overview. Pure: the numbers in, a verdict out.
 */
export type CapProjection =
  | { kind: 'unlimited' }
  | { kind: 'reached' }
  | { kind: 'idle' }
  | { kind: 'lasts_today' }
  | { kind: 'runs_out'; at: Date };

const DAY_MS = 86_400_000;

export function projectDailyCap(input: {
  usedToday: number;
  dailyCap: number | null;
  inLastMinute: number;
  nowMs: number;
}): CapProjection {
  if (input.dailyCap === null) return { kind: 'unlimited' };
  const left = input.dailyCap - input.usedToday;
  if (left <= 0) return { kind: 'reached' };
  if (input.inLastMinute <= 0) return { kind: 'idle' };
  const at = input.nowMs + (left / input.inLastMinute) * 60_000;
  // The cap is per UTC day: it resets at the next midnight.
  const midnight = Math.floor(input.nowMs / DAY_MS) * DAY_MS + DAY_MS;
  return at >= midnight ? { kind: 'lasts_today' } : { kind: 'runs_out', at: new Date(at) };
}
