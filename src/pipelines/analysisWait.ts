/**
 * How long to wait before looking again at a call that is not analysed yet: `floorMs` for a fresh
 * call (the analysis.ready webhook usually comes first), then a tenth of the call's age (a 10-hour-old call is checked hourly), at most 2 hours;
 * after 48 hours it is given up (state failed, SERVICE_NOT_READY; an operator can replay it).
 * Each look costs a Service request, so a call that never gets analysed must not cost forever.
 */
export const ANALYSIS_GIVE_UP_MS = 48 * 3_600_000;
const CEILING_MS = 2 * 3_600_000;

export function analysisWaitMs(ageMs: number, floorMs = 60_000): number {
  return Math.min(CEILING_MS, Math.max(floorMs, Math.round(ageMs / 10)));
}
