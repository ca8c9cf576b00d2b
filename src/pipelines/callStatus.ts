/**
 * What the Service's call status means for the sync (pure), the one place that decides. CONTRACT.md
 * lists the assumed values and says unknown values must be kept, not rejected.
 */
/**
 * - live: the call is going on (scheduled, in_progress); push context, look for the analysis later;
 * - finished: over, analysis not there yet (completed, processing); look again later;
 * - analyzed: write it back;
 * - ended: the call will never be analysed (failed, or cancelled): skip it, with the reason;
 * - unknown: any other value. Conservatively treated like `finished`: looked at again with the
 *   usual backoff (it may become analysed) and given up after 48 hours (ANALYSIS_GIVE_UP_MS).
 */
export type CallPhase = 'live' | 'finished' | 'analyzed' | 'ended' | 'unknown';

const PHASES: Record<string, CallPhase> = {
  scheduled: 'live',
  in_progress: 'live',
  completed: 'finished',
  processing: 'finished',
  analyzed: 'analyzed',
  failed: 'ended',
  // Not in CONTRACT.md's list; spelled both ways, these can only mean the call did not take place.
  cancelled: 'ended',
  canceled: 'ended',
};

export function callPhaseOf(status: string | null | undefined): CallPhase {
  return (status && PHASES[status]) || 'unknown';
}

/** Why a call in the `ended` phase is skipped, as recorded on its sync row. */
export function endedReason(status: string): string {
  return status === 'failed'
    ? 'the call failed at the Service'
    : `the call was ${status} at the Service (status "${status}")`;
}
