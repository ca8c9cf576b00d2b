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

/**
 * Why a call not analysed yet is given up now, or null to keep waiting. The 48 hours count from
 * the call: a call already older when crm-sync first saw it (a backfill of old calls) is looked
 * at once, not waited for, and its reason says so rather than claiming a wait that never happened.
 */
export function analysisGiveUpReason(input: {
  ageMs: number;
  seenForMs: number;
  why: string;
}): string | null {
  if (input.ageMs <= ANALYSIS_GIVE_UP_MS) return null;
  const hours = (ms: number) => Math.round(ms / 3_600_000);
  const ageAtDiscovery = input.ageMs - input.seenForMs;
  if (ageAtDiscovery > ANALYSIS_GIVE_UP_MS) {
    return `${input.why}; the call was already ${hours(ageAtDiscovery)} h old when crm-sync found it, past the 48 h it waits for an analysis, so it was looked at once and not waited for`;
  }
  return `${input.why} ${hours(input.ageMs)} h after the call; gave up`;
}
