/**
 * Delay before a failed job runs again, after its `attempts`-th try: 5 s doubling per try, capped
 * at 15 min, with "equal jitter" (half fixed, half random) so that jobs failing together (a CRM
 * outage) do not come back together. Floor 1 s. `random` returns [0, 1) (injected in tests).
 */
export const JOB_BACKOFF = { baseMs: 5_000, floorMs: 1_000, ceilingMs: 15 * 60_000 } as const;

export function jobRetryDelayMs(attempts: number, random: () => number = Math.random): number {
  const exponent = Math.max(0, Math.min(attempts - 1, 30));
  const ceiling = Math.min(JOB_BACKOFF.ceilingMs, JOB_BACKOFF.baseMs * 2 ** exponent);
  const delay = ceiling / 2 + (random() * ceiling) / 2;
  return Math.max(JOB_BACKOFF.floorMs, Math.round(delay));
}
